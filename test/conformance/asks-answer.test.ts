import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import type { TurnHandle } from '../../core/orchestrator/index.js';
import type { OpenAsk } from '../../core/permissions/index.js';
import { CliRigs, type CliResult, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults, type Step } from '../support/scripted-model.js';
import { until } from './orchestrator-rig.js';

// Escalated asks answered from anywhere, with the real droid 0.225.2 at autonomy low: the
// scripted model calls Execute with riskLevel medium, which droid asks about, and One Works'
// policy escalates (the command is not on the allowlist). Nobody follows the turn on a
// terminal; the ask waits orchestrator.askTimeoutMs for `one-works answer` from another process.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2 runs each Execute under a bash supervisor that polls for droid every 2 s.
const TOOL_LINGER_MS = 10_000;
const COMMAND = 'echo hi >> f.txt';

const askingExecute = (id: string): Step => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command: COMMAND, riskLevel: 'medium', riskLevelReason: 'writes a file' } }],
});
const echoToolResult: Step = (request) => ({ text: `Tool said: ${toolResults(request)[0]?.content.trim() ?? '(nothing)'}` });

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

function lastJson<T>(result: CliResult): T {
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as T;
}

// Submits a turn in the background and returns its handle (the CLI exits at once).
async function submit(rig: CliRig, prompt: string): Promise<TurnHandle> {
  return lastJson<TurnHandle>(await rig.run(['--json', 'run', '-d', '-w', rig.workspace, prompt]));
}

// Polls `one-works asks SESSION --json` (a separate process each time) until an ask is open.
async function openAsk(rig: CliRig, sessionId: string): Promise<OpenAsk> {
  let found: OpenAsk | undefined;
  await until(async () => {
    const result = await rig.run(['--json', 'asks', sessionId]);
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n').filter(Boolean);
    found = lines.length > 0 ? (JSON.parse(lines[0]!) as OpenAsk) : undefined;
    return found !== undefined;
  });
  return found!;
}

async function waitSettled(rig: CliRig, sessionId: string): Promise<void> {
  const waited = lastJson<{ timedOut: boolean }>(await rig.run(['--json', 'wait', sessionId, '--timeout', '120']));
  expect(waited.timedOut).toBe(false);
}

const decided = (events: RuntimeEvent[]) => events.filter((e) => e.type === 'permission.decided');

describe('asks answered from another process (real droid, no terminal)', () => {
  it('lists the open ask and runs the tool once `one-works answer ASK allow` answers it', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_cli_answer'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { askTimeoutMs: 90_000 } });
    const handle = await submit(rig, 'make a file');
    const ask = await openAsk(rig, handle.sessionId);
    expect(ask).toMatchObject({
      sessionId: handle.sessionId,
      runId: handle.runId,
      kind: 'tool',
      tools: [{ name: 'Execute', kind: 'execute', command: COMMAND, impact: 'medium' }],
      reason: expect.stringContaining('autonomy'),
    });
    expect(ask.expiresAt).toBeDefined();
    // The human listing names the ask, the command and how to answer.
    const listed = await rig.run(['asks']);
    expect(listed.stdout).toContain(ask.askId);
    expect(listed.stdout).toContain(`one-works answer ${ask.askId} allow | allow-session | deny`);
    expect(await exists(join(rig.workspace, 'f.txt'))).toBe(false);

    const answered = await rig.run(['answer', ask.askId, 'allow']);
    expect(answered.exitCode, answered.stderr).toBe(0);
    await waitSettled(rig, handle.sessionId);

    expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\n');
    const events = await rig.readEvents(handle.sessionId);
    expect(decided(events)).toEqual([
      expect.objectContaining({ requestId: ask.requestId, decision: 'allow', by: 'human', channel: 'cli', option: 'allow-once' }),
    ]);
    expect((await rig.readSession(handle.sessionId)).status).toBe('idle');
    expect(model.pending()).toBe(0);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('lets the first of two racing answers win and tells the other who answered', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_race'), echoToolResult] });
    // The orchestrator stays up after the turn, so that the slower answer reaches it (dispose stops it).
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { askTimeoutMs: 90_000, idleExitMs: 60_000 } });
    const handle = await submit(rig, 'make a file');
    const ask = await openAsk(rig, handle.sessionId);

    const [allow, deny] = await Promise.all([
      rig.run(['--json', 'answer', ask.askId, 'allow']),
      rig.run(['--json', 'answer', ask.askId, 'deny']),
    ]);
    const results = [allow, deny];
    expect(results.filter((r) => r.exitCode === 0)).toHaveLength(1);
    const loser = results.find((r) => r.exitCode !== 0)!;
    expect(loser.stdout + loser.stderr).toContain('ask_already_answered');
    expect(loser.stdout + loser.stderr).toContain(`ask ${ask.askId} was already answered by a person with \`one-works answer\``);
    await waitSettled(rig, handle.sessionId);

    const winner = allow.exitCode === 0 ? 'allow' : 'deny';
    const events = await rig.readEvents(handle.sessionId);
    expect(decided(events)).toEqual([expect.objectContaining({ decision: winner, by: 'human', channel: 'cli' })]);
    expect(await exists(join(rig.workspace, 'f.txt'))).toBe(winner === 'allow');
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('declines an ask nobody answers within askTimeoutMs: file unwritten, needs attention, says how to answer next time', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_timeout'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { askTimeoutMs: 3_000 } });
    // `run` follows the turn without a terminal: it waits with the ask, then reports the decline.
    const result = await rig.run(['run', '-w', rig.workspace, 'make a file']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [sessionId] = await rig.sessionIds();
    const events = await rig.readEvents(sessionId!);
    const [decision] = decided(events);
    expect(decision).toMatchObject({ decision: 'deny', by: 'policy', option: 'deny' });
    expect(decision?.reason).toContain('nobody answered within 3 s');
    expect(await exists(join(rig.workspace, 'f.txt'))).toBe(false);
    const record = await rig.readSession(sessionId!);
    expect(record.status).toBe('needs_attention');
    const attention = record.attention?.join('\n') ?? '';
    expect(attention).toContain(`permission for execute: ${COMMAND} was declined`);
    expect(attention).toContain(`one-works asks ${sessionId}`);
    expect(attention).toContain('askTimeoutMs');
    expect(await rig.run(['asks', sessionId!])).toMatchObject({ exitCode: 0 });

    // A person clears it; an event records who and why.
    const resolved = await rig.run(['--json', 'sessions', 'resolve', sessionId!, '--note', 'looked at it']);
    expect(lastJson<{ state: string }>(resolved).state).toBe('idle');
    const after = await rig.readSession(sessionId!);
    expect(after.status).toBe('idle');
    expect(after.attention).toBeUndefined();
    expect((await rig.readEvents(sessionId!)).find((e) => e.type === 'attention.resolved')).toMatchObject({
      by: 'human',
      note: 'looked at it',
      cleared: [expect.stringContaining('was declined')],
    });
    const again = await rig.run(['sessions', 'resolve', sessionId!]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('does not need attention');
  });

  it('reuses "allow for this session" in a send from a new process: the same command runs without asking', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_first'), echoToolResult, askingExecute('call_second'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { askTimeoutMs: 90_000 } });
    const handle = await submit(rig, 'make a file');
    const ask = await openAsk(rig, handle.sessionId);
    expect((await rig.run(['answer', ask.askId, 'allow-session'])).exitCode).toBe(0);
    await waitSettled(rig, handle.sessionId);
    const record = await rig.readSession(handle.sessionId);
    expect(record.sessionAllows).toEqual([`execute:${COMMAND}`]);
    // The auto-started orchestrator exits when idle: the send below runs in a new one.
    await rig.untilNoServer();

    const second = await rig.run(['send', handle.sessionId, 'again']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\nhi\n');
    const events = await rig.readEvents(handle.sessionId);
    expect(events.filter((e) => e.type === 'permission.requested')).toHaveLength(2);
    const [first, later] = decided(events);
    expect(first).toMatchObject({ decision: 'allow', by: 'human', channel: 'cli' });
    expect(later).toMatchObject({ decision: 'allow', by: 'policy', option: 'allow-once' });
    expect(later?.reason).toContain('approved for this session');
    expect(model.pending()).toBe(0);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });
});
