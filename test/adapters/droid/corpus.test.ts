import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventDraft } from '../../../core/events/index.js';
import * as methods from '../../../adapters/droid/methods.js';
import { askedDraft } from '../../../adapters/droid/project.js';
import { AskUserAnswerSchema, RequestPermissionAnswerSchema } from '../../../adapters/droid/wire.js';
import { EventDraftSchema } from '../../../core/events/index.js';
import { CorpusError, readCapture, runDroidCapture, type CorpusEntry } from '../../support/droid-corpus-harness.js';

/**
 * Every real droid 0.225.2 capture goes through the envelope, the wire schemas, negotiation and
 * the projector; the result must equal the reviewed `<case>.events.json` next to it. Regenerate
 * with `npx tsx test/support/regen-droid-corpus.ts` and review the diff by hand.
 */
const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'droid', '0.225.2');
const CAPTURES = readdirSync(DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();
const capturePath = (name: string) => join(DIR, `${name}.jsonl`);
const eventsOf = (entries: CorpusEntry[]): EventDraft[] => entries.flatMap((e) => ('event' in e ? [e.event] : []));
const liveEvents = (entries: CorpusEntry[]): EventDraft[] => entries.flatMap((e) => ('event' in e && !('history' in e) ? [e.event] : []));
type ToolEvent = Extract<EventDraft, { type: 'tool.call' | 'tool.result' }>;
const toolEvents = (events: EventDraft[]) => events.filter((e): e is ToolEvent => e.type === 'tool.call' || e.type === 'tool.result');

describe('droid 0.225.2 corpus', () => {
  it('has captures, each with its expected events and no orphan expectations', () => {
    expect(CAPTURES.length).toBeGreaterThanOrEqual(28);
    for (const capture of CAPTURES) expect(existsSync(join(DIR, capture.replace(/\.jsonl$/, '.events.json'))), capture).toBe(true);
    for (const expected of readdirSync(DIR).filter((f) => f.endsWith('.events.json'))) {
      expect(CAPTURES, expected).toContain(expected.replace(/\.events\.json$/, '.jsonl'));
    }
  });

  describe.each(CAPTURES)('%s', (capture) => {
    const run = runDroidCapture(join(DIR, capture));

    it('projects to the reviewed expected events', () => {
      const expected: unknown = JSON.parse(readFileSync(join(DIR, capture.replace(/\.jsonl$/, '.events.json')), 'utf8'));
      expect(run.entries).toEqual(expected);
    });

    it('leaves no tool span open and opens/closes each span exactly once', () => {
      expect(run.entries.filter((e) => e.line === 'end')).toEqual([]);
      const byTool = new Map<string, ToolEvent[]>();
      for (const e of toolEvents(eventsOf(run.entries))) byTool.set(e.toolUseId, [...(byTool.get(e.toolUseId) ?? []), e]);
      for (const [id, events] of byTool) {
        expect(
          events.filter((e) => e.type === 'tool.call' && e.phase === 'open'),
          id,
        ).toHaveLength(1);
        expect(
          events.filter((e) => e.type === 'tool.result'),
          id,
        ).toHaveLength(1);
      }
    });

    it('reuses a key only for an identical re-emission of the same fact', () => {
      const seen = new Map<string, EventDraft>();
      for (const event of eventsOf(run.entries)) {
        const first = seen.get(event.key);
        if (first) expect(event, event.key).toEqual(first);
        else seen.set(event.key, event);
      }
    });

    it('builds asks whose events are valid drafts', () => {
      for (const entry of run.entries) if ('ask' in entry) expect(EventDraftSchema.safeParse(askedDraft(entry.ask)).success).toBe(true);
    });
  });
});

describe('droid 0.225.2 corpus: dedup facts', () => {
  it('two-tool-calls-one-message: two spans, each opened once and closed once', () => {
    const tools = toolEvents(eventsOf(runDroidCapture(capturePath('two-tool-calls-one-message')).entries));
    expect([...new Set(tools.map((e) => e.toolUseId))]).toEqual(['call_1_0', 'call_1_1']);
    for (const id of ['call_1_0', 'call_1_1']) {
      expect(tools.filter((e) => e.toolUseId === id).map((e) => (e.type === 'tool.call' ? e.phase : 'result'))).toEqual([
        'open',
        'input',
        'queued',
        'running',
        'result',
      ]);
    }
  });

  it('interrupt-long-tool: droid sends tool_result twice, one tool.result comes out', () => {
    const { entries, frames } = runDroidCapture(capturePath('interrupt-long-tool'));
    const sent = frames.filter(
      (f) => (f.frame.params as { notification?: { type?: string } } | undefined)?.notification?.type === 'tool_result',
    );
    expect(sent).toHaveLength(2);
    expect(eventsOf(entries).filter((e) => e.type === 'tool.result')).toMatchObject([{ toolUseId: 'call_1_0', isError: true }]);
  });

  it('load-session-second-turn: the replayed history has exactly the live keys of load-session-first-process', () => {
    const first = liveEvents(runDroidCapture(capturePath('load-session-first-process')).entries);
    const messageKeys = first.filter((e) => e.key.startsWith('msg:') || e.key.startsWith('tool:')).map((e) => e.key);
    const replay = runDroidCapture(capturePath('load-session-second-turn')).entries.flatMap((e) => ('history' in e ? [e.event.key] : []));
    expect(messageKeys).toHaveLength(2);
    expect(replay).toEqual(messageKeys);
  });
});

describe('droid 0.225.2 corpus: what the client sent', () => {
  const descriptors = [
    methods.InitializeSession,
    methods.LoadSession,
    methods.UpdateSessionSettings,
    methods.AddUserMessage,
    methods.InterruptSession,
    methods.CloseSession,
    methods.ListModels,
    methods.ListTools,
    methods.ListMcpServers,
    methods.RenameSession,
    methods.ForkSession,
  ];
  const byMethod = new Map<string, (typeof descriptors)[number]>(descriptors.map((d) => [d.method, d]));
  // Deliberately bad client frames of the captures: our strict params refuse them before the wire.
  const REFUSED = [
    'protocol-errors.jsonl:11 droid.initialize_session',
    'update-settings-unknown-model.jsonl:11 droid.update_session_settings',
  ];

  it('our strict params accept every request the driver sent except the deliberately bad ones', () => {
    const refused: string[] = [];
    for (const capture of CAPTURES) {
      for (const { line, dir, frame } of readCapture(join(DIR, capture))) {
        const descriptor = dir === 'out' && frame.type === 'request' ? byMethod.get(String(frame.method)) : undefined;
        if (descriptor && !descriptor.params.safeParse(frame.params).success) refused.push(`${capture}:${line} ${descriptor.method}`);
      }
    }
    expect(refused).toEqual(REFUSED);
  });

  it('our answer schemas accept every answer the driver gave to droid requests', () => {
    let answers = 0;
    for (const capture of CAPTURES) {
      const frames = readCapture(join(DIR, capture));
      const asked = new Map(frames.filter((f) => f.dir === 'in' && f.frame.type === 'request').map((f) => [f.frame.id, f.frame.method]));
      for (const { dir, frame } of frames) {
        if (dir !== 'out' || frame.type !== 'response' || !asked.has(frame.id)) continue;
        const schema = asked.get(frame.id) === methods.DROID_METHODS.askUser ? AskUserAnswerSchema : RequestPermissionAnswerSchema;
        expect(schema.safeParse(frame.result).success, `${capture} ${String(frame.id)}`).toBe(true);
        answers += 1;
      }
    }
    expect(answers).toBeGreaterThanOrEqual(10);
  });
});

describe('droid corpus harness', () => {
  it('fails loudly, naming file and line, on a frame it cannot map', () => {
    const dir = mkdtempSync(join(tmpdir(), 'droid-corpus-'));
    try {
      const file = join(dir, 'unknown.jsonl');
      const head = { jsonrpc: '2.0', factoryApiVersion: '1.0.0', factoryProtocolVersion: '1.220.0' };
      const frame = {
        ...head,
        type: 'notification',
        method: 'droid.session_notification',
        params: { notification: { type: 'brand_new' } },
      };
      writeFileSync(file, `${JSON.stringify({ dir: 'in', frame })}\n`);
      expect(() => runDroidCapture(file)).toThrow(CorpusError);
      expect(() => runDroidCapture(file)).toThrow(/unknown\.jsonl:1: notification is unknown/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
