import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeEventSchema } from '../../core/events/index.js';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// `one-works run` with the real droid 0.225.2 (managed, from the conformance cache) and a
// scripted model answering one text reply.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TEXT = 'Hello from the scripted model.';

describe('one-works run: a text turn', () => {
  it('prints the reply, records a completed run and a well-formed event log', async () => {
    const model = await rigs.model({ steps: [{ text: TEXT, usage: { prompt_tokens: 111, completion_tokens: 7 } }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'say hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(TEXT);
    const ids = await rig.sessionIds();
    expect(ids).toHaveLength(1);
    const id = ids[0]!;
    expect(result.stdout).toContain(`session ${id}: completed`);

    const record = await rig.readSession(id);
    expect(record).toMatchObject({ id, adapter: 'droid', workspace: rig.workspace, cliVersion: '0.225.2', status: 'idle' });
    expect(record.nativeSessionId).toEqual(expect.any(String));
    expect(record.runs).toHaveLength(1);
    expect(record.runs[0]).toMatchObject({
      id: 'r1',
      prompt: 'say hello',
      status: 'completed',
      reason: 'completed',
      text: TEXT,
      model: 'custom:Scripted-0',
    });
    // droid 0.225.2 adds its session-title side request (scripted default usage 60/4) to the
    // turn when that request finishes in time, so the step's own tokens are a lower bound.
    const usage = record.runs[0]?.usage;
    expect(usage?.reported).toBe(true);
    expect(usage?.inputTokens).toBeGreaterThanOrEqual(111);
    expect(usage?.outputTokens).toBeGreaterThanOrEqual(7);

    // Every line parses on its own; seq starts at 1 and strictly increases.
    // The orchestrator closes the idle droid after the turn settled; run does not wait for it.
    await rig.closedEvents(id);
    const lines = await rig.readEventLines(id);
    const events = lines.map((line) => RuntimeEventSchema.parse(JSON.parse(line)));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.sessionId))).toEqual(new Set([id]));
    expect(events.some((e) => e.type === 'assistant.delta')).toBe(false); // live only

    const types = events.map((e) => e.type);
    const at = (type: string): number => types.indexOf(type as (typeof types)[number]);
    for (const type of ['session.started', 'turn.started', 'assistant.message', 'turn.completed', 'session.closed']) {
      expect(
        types.filter((t) => t === type),
        type,
      ).toHaveLength(1);
    }
    // The child starts lazily inside the turn, so turn.started precedes session.started.
    expect(at('turn.started')).toBeLessThan(at('session.started'));
    expect(at('session.started')).toBeLessThan(at('assistant.message'));
    expect(at('assistant.message')).toBeLessThan(at('turn.completed'));
    expect(types.at(-1)).toBe('session.closed');

    expect(events[at('session.started')]).toMatchObject({
      adapter: 'droid',
      workspace: rig.workspace,
      resumed: false,
      cliVersion: '0.225.2',
      versionFacts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' },
    });
    expect(events[at('assistant.message')]).toMatchObject({ text: TEXT });
    expect(events[at('turn.completed')]).toMatchObject({
      runId: 'r1',
      outcome: { status: 'completed', reason: 'completed', text: TEXT, usage },
    });
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });

  it('prints one JSON value per line in --json mode, ending with the result', async () => {
    const model = await rigs.model({ steps: [{ text: TEXT }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    const result = await rig.run(['--json', 'run', '--workspace', rig.workspace, 'say hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    const values = result.stdout.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const last = values.at(-1)!;
    const [id] = await rig.sessionIds();
    expect(last).toMatchObject({
      type: 'result',
      sessionId: id,
      outcome: { status: 'completed', reason: 'completed', text: TEXT, usage: { reported: true } },
      record: join(rig.stateDir, 'sessions', id!, 'session.json'),
      events: join(rig.stateDir, 'sessions', id!, 'events.jsonl'),
    });
    // Everything before the result is a live event, deltas included.
    const live = values.slice(0, -1).map((value) => RuntimeEventSchema.parse(value));
    expect(
      live
        .filter((e) => e.type === 'assistant.delta')
        .map((e) => (e.type === 'assistant.delta' ? e.text : ''))
        .join(''),
    ).toBe(TEXT);
    expect(live.map((e) => e.type)).toEqual(
      expect.arrayContaining(['session.started', 'turn.started', 'assistant.message', 'turn.completed']),
    );
    // The recorded log holds the same non-delta events.
    const recorded = await rig.readEvents(id!);
    const liveKeys = live.filter((e) => e.type !== 'assistant.delta').map((e) => e.key);
    expect(recorded.map((e) => e.key).slice(0, liveKeys.length)).toEqual(liveKeys);
  });

  it('redacts a configured secret the model echoes, even when split across stream pieces', async () => {
    const text = `The key is ${RIG_API_KEY}, keep it safe.`;
    const model = await rigs.model({ steps: [{ text }, { text }], textPieceSize: 5 });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    const human = await rig.run(['run', '--workspace', rig.workspace, 'tell me the key']);
    const json = await rig.run(['--json', 'run', '--workspace', rig.workspace, 'tell me the key']);
    for (const result of [human, json]) {
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('[REDACTED]');
      expect(result.stdout + result.stderr).not.toContain(RIG_API_KEY);
    }
    for (const id of await rig.sessionIds()) {
      const dir = join(rig.stateDir, 'sessions', id);
      expect(await readFile(join(dir, 'events.jsonl'), 'utf8')).not.toContain(RIG_API_KEY);
      expect(await readFile(join(dir, 'session.json'), 'utf8')).not.toContain(RIG_API_KEY);
      expect((await rig.readSession(id)).runs[0]?.text).toBe('The key is [REDACTED], keep it safe.');
    }
    // The model did receive the key (droid sent it as the bearer token), so it was in play.
    expect(model.requests.some((r) => r.headers.authorization === `Bearer ${RIG_API_KEY}`)).toBe(true);
  });
});
