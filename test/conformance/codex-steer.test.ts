import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import type { TurnHandle } from '../../core/orchestrator/index.js';
import { type CliResult, CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { responsesTranscript, startScriptedResponses } from '../support/scripted-responses.js';

// Steering a live turn of the real Codex 0.171.0 (`turn/steer`): `send --interrupt` with the
// turn's own settings gives the message to the live turn instead of interrupting it. The scripted
// Responses server holds the turn's first model request until the steering message was taken;
// Codex's next request of the SAME turn carries it, and the run completes with the later answer.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);

function lastJson<T>(result: CliResult): T {
  expect(result, result.stderr).toMatchObject({ exitCode: 0 });
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as T;
}

// Polls `check` every 100 ms for at most `timeoutMs`; false when it never held.
async function within(timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  for (const start = Date.now(); Date.now() - start < timeoutMs; await sleep(100)) if (await check()) return true;
  return check();
}

describe('codex: steering a live turn with turn/steer', () => {
  it('send --interrupt adds the message to the live turn: no interrupt, no new run, the next model request carries it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const model = await startScriptedResponses({
      steps: [{ holdUntil: held, text: 'First part.' }, { text: 'Steered answer.' }],
    });
    rigs.defer(async () => {
      release();
      await model.close();
    });
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });
    const server = rig.start(['serve']);
    rigs.defer(async () => {
      server.kill('SIGTERM');
      await server.result.catch(() => undefined);
    });
    expect(await within(30_000, () => existsSync(join(rig.stateDir, 'orchestrator.sock')))).toBe(true);

    const first = lastJson<TurnHandle>(await rig.run(['--json', 'submit', '--adapter', 'codex', '-w', rig.workspace, 'long job']));
    const id = first.sessionId;
    expect(await within(60_000, () => model.requests.some((r) => r.kind === 'step'))).toBe(true);
    const codexes = rig.processes().filter((p) => p.args.includes('app-server'));
    expect(codexes).toHaveLength(1);

    const steered = lastJson<TurnHandle>(await rig.run(['--json', 'send-queued', id, 'STEER-7Q: answer in French', '--interrupt']));
    expect(steered).toMatchObject({ sessionId: id, runId: first.runId, state: 'running' });
    // The same codex holds the turn (the orchestrator closes it once the turn settles).
    expect(
      rig
        .processes()
        .filter((p) => p.args.includes('app-server'))
        .map((p) => p.pid),
    ).toEqual(codexes.map((p) => p.pid));
    release();

    expect(await within(60_000, async () => (await rig.readSession(id)).runs[0]?.status === 'completed')).toBe(true);
    const record = await rig.readSession(id);
    expect(record.runs.map((run) => [run.id, run.status, run.text])).toEqual([[first.runId, 'completed', 'Steered answer.']]);
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    expect(responsesTranscript(steps[0]!)).not.toContain('STEER-7Q');
    const transcript = responsesTranscript(steps[1]!);
    // The turn's prompt, then the steering message (0.171.0 does not keep the held reply's text).
    expect(transcript).toContain('long job');
    expect(transcript.indexOf('STEER-7Q: answer in French')).toBeGreaterThan(transcript.indexOf('long job'));
    // One codex, one thread, one turn: nothing interrupted or restarted.
    expect(steps[1]!.headers['thread-id']).toBe(record.nativeSessionId);
    const events = await rig.readEvents(id);
    expect(ofType(events, 'session.started')).toHaveLength(1);
    expect(ofType(events, 'turn.started').map((e) => e.runId)).toEqual([first.runId]);
    expect(ofType(events, 'turn.completed').map((e) => e.outcome.status)).toEqual(['completed']);
    expect(ofType(events, 'log').filter((e) => e.level === 'info' && e.message.includes('steered run'))).toEqual([
      expect.objectContaining({ message: `steered run ${first.runId}: STEER-7Q: answer in French` }),
    ]);
    expect(ofType(events, 'error')).toEqual([]);

    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  }, 180_000);
});
