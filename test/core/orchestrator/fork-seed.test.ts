import { describe, expect, it } from 'vitest';
import type { EventDraft, RuntimeEvent } from '../../../core/events/index.js';
import { buildForkSeed, MAX_FORK_SEED_CHARS } from '../../../core/orchestrator/fork-seed.js';

let seq = 0;
const stamp = (draft: EventDraft): RuntimeEvent =>
  ({ ...draft, sessionId: 's-src', seq: ++seq, at: '2026-12-01T00:00:00Z' }) as RuntimeEvent;
const queued = (runId: string, prompt: string) => stamp({ type: 'turn.queued', key: `q${runId}`, runId, prompt });
const started = (runId: string) => stamp({ type: 'turn.started', key: `s${runId}`, runId });
const said = (text: string) => stamp({ type: 'assistant.message', key: `a${seq}`, messageId: `m${seq}`, text });
const tool = (id: string, label: string, output: string, isError = false): RuntimeEvent[] => [
  stamp({ type: 'tool.call', key: `c${id}`, toolUseId: id, name: 'Execute', kind: 'execute', label, phase: 'running' }),
  stamp({ type: 'tool.result', key: `r${id}`, toolUseId: id, isError, output }),
];

describe('buildForkSeed', () => {
  // r2 is accepted (turn.queued) while r1 still runs: its events start at its turn.started.
  const log = [
    queued('r1', 'write hello'),
    started('r1'),
    queued('r2', 'now read it'),
    ...tool('t1', 'execute: echo hello > hello.txt', 'done'),
    said('Wrote it.'),
    started('r2'),
    ...tool('t2', 'execute: cat hello.txt', 'no such file', true),
    said('It is gone.'),
  ];
  const runs = new Set(['r1', 'r2']);

  it('carries prompts, replies and tool outcomes up to the chosen run, then the new prompt', () => {
    const seed = buildForkSeed('s-src', log, runs, 'r1', 'try another way');
    expect(seed.runs).toEqual(['r1']);
    expect(seed.text).toBe(
      [
        '[Forked from One Works session s-src up to run r1. The conversation so far, for context:]',
        'User: write hello',
        'Tool execute: echo hello > hello.txt → ok: done',
        'Assistant: Wrote it.',
        '[End of the earlier conversation.]',
        '',
        'try another way',
      ].join('\n'),
    );
  });

  it('carries every run without --run, and asks the agent to continue without a prompt', () => {
    const seed = buildForkSeed('s-src', log, runs, undefined, '  ');
    expect(seed.runs).toEqual(['r1', 'r2']);
    expect(seed.text).toContain('User: now read it\nTool execute: cat hello.txt → error: no such file\nAssistant: It is gone.');
    expect(seed.text.endsWith('\n\nContinue from here.')).toBe(true);
  });

  it('reads imported history, whose turns have no turn.started', () => {
    const imported = [queued('imported-1', 'old question'), said('old answer'), queued('imported-2', 'later'), said('later answer')];
    const seed = buildForkSeed('s-src', imported, new Set(), 'imported-1', 'next');
    expect(seed.runs).toEqual(['imported-1']);
    expect(seed.text).toContain('User: old question\nAssistant: old answer\n[End');
    expect(seed.text).not.toContain('later');
  });

  it('stays within its bound, dropping the oldest entries and saying how many', () => {
    const long = Array.from({ length: 60 }, (_, i) => [started(`r${i}`), said(`${i} ${'x'.repeat(1500)}`)]).flat();
    const seed = buildForkSeed('s-src', long, new Set(), undefined, 'go');
    expect(seed.omitted).toBeGreaterThan(0);
    expect(seed.text.length).toBeLessThanOrEqual(MAX_FORK_SEED_CHARS + 200);
    expect(seed.text).toContain(`[… ${seed.omitted} earlier entries omitted]`);
    expect(seed.text).toContain('59 xxx');
    expect(seed.text).not.toContain('\nAssistant: 0 x');
  });
});
