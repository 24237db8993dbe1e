import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TSX_LOADER } from '../peers/fake-droid-binary.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// Protocol faults of a broken runner (test/peers/fake-runner.ts), each through `one-works run
// --adapter process:fake`: a clear recorded outcome (failed, runner_error or the open deadline),
// an error event saying what broke, no hang and no process left.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const FAKE_RUNNER = fileURLToPath(new URL('../peers/fake-runner.ts', import.meta.url));
const AGENT_CLOSE_MS = 15_000;

async function faultRig(fault: string, harness: Record<string, unknown> = {}): Promise<CliRig> {
  return rigs.create({
    baseUrl: 'http://127.0.0.1:9',
    process: {
      harnesses: { fake: { command: process.execPath, args: ['--import', TSX_LOADER, FAKE_RUNNER, fault], ...harness } },
    },
  });
}

async function runFault(fault: string, harness: Record<string, unknown> = {}) {
  const rig = await faultRig(fault, harness);
  const result = await rig.run(['run', '--adapter', 'process:fake', '--workspace', rig.workspace, 'hello']);
  const [id] = await rig.sessionIds();
  const record = await rig.readSession(id!);
  const events = await rig.closedEvents(id!);
  const errors = events.filter((e) => e.type === 'error').map((e) => `${e.code}: ${e.message}`);
  const left = await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS);
  return { rig, result, record, errors, left };
}

describe('process runner: protocol faults', () => {
  it('a well-behaved fake completes (the control case)', async () => {
    const { rig, result, record, left } = await runFault('none');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'fake reply' });
    expect(left).toEqual([]);
    // Its checkpoint was verified and recorded outside the session HOME.
    const checkpoint = join(rig.stateDir, 'sessions', record.id, 'runner-checkpoints', record.nativeSessionId!, 'r1');
    expect(await readFile(join(checkpoint, 'files', 'state.txt'), 'utf8')).toBe('state');
    expect(JSON.parse(await readFile(join(checkpoint, 'manifest.json'), 'utf8'))).toMatchObject({
      runId: 'r1',
      files: [{ path: 'state.txt', size: 5 }],
    });
  });

  it('a 5 MiB line: the turn fails with runner_error naming the 4 MiB cap', async () => {
    const { result, record, errors, left } = await runFault('oversized');
    expect(result.exitCode).not.toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(errors.join('\n')).toMatch(/runner_error: .*exceeds maxLineBytes \(4194304 bytes\)/);
    expect(left).toEqual([]);
  });

  it('an unknown field: the turn fails with runner_error naming the field', async () => {
    const { result, record, errors, left } = await runFault('unknown-field');
    expect(result.exitCode).not.toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(errors.join('\n')).toMatch(/runner_error: .*invalid event frame.*extra/);
    expect(left).toEqual([]);
  });

  it('a reply to an unknown id: the turn fails with runner_error naming the id', async () => {
    const { result, record, errors, left } = await runFault('unknown-id');
    expect(result.exitCode).not.toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(errors.join('\n')).toContain('reply to unknown request id "no-such-request"');
    expect(left).toEqual([]);
  });

  it('an exit mid-turn: the turn fails with runner_error, with the exit code and the stderr tail', async () => {
    const { result, record, errors, left } = await runFault('crash');
    expect(result.exitCode).not.toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(errors.join('\n')).toMatch(
      /runner_error: process:fake exited with code 3; stderr: fake runner: crashing on purpose before the turn ended/,
    );
    expect(left).toEqual([]);
  });

  it('no answer to open within the deadline: the turn fails with request_timeout and the runner is stopped', async () => {
    const { result, record, errors, left } = await runFault('silent-open', { openTimeoutMs: 1_500 });
    expect(result.exitCode).not.toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'request_timeout' });
    expect(errors.join('\n')).toContain('process:fake did not answer open within 1500 ms');
    expect(left).toEqual([]);
  });

  it('a checkpoint naming a path outside its directory: the turn fails with runner_error, nothing is recorded', async () => {
    const { rig, result, record, errors, left } = await runFault('checkpoint-outside');
    expect(result.exitCode).not.toBe(0);
    const store = join(rig.stateDir, 'sessions', record.id, 'runner-checkpoints', record.nativeSessionId!);
    await expect(readFile(join(store, 'latest.json'))).rejects.toThrow();
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(errors.join('\n')).toContain('checkpoint refused: "../escape.txt" is not a relative path inside the runner\'s directory');
    expect(left).toEqual([]);
  });

  it('a checkpoint with a wrong size: the turn fails with runner_error naming both sizes', async () => {
    const { result, record, errors, left } = await runFault('checkpoint-size');
    expect(result.exitCode).not.toBe(0);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(errors.join('\n')).toContain('checkpoint refused: "state.txt" has 5 bytes, the runner said 7');
    expect(left).toEqual([]);
  });

  it('32 concurrent tool calls are served; a 33rd open at once fails the turn with runner_error', async () => {
    // Each call runs `sleep 1`, so all of them are open together however the lines are chunked.
    const ok = await runFault('tools-32', { autonomy: 'high' });
    expect(ok.result.exitCode, ok.result.stderr).toBe(0);
    expect(ok.record.runs[0]).toMatchObject({ status: 'completed', text: 'all tools done' });
    const over = await runFault('tools-33', { autonomy: 'high' });
    expect(over.record.runs[0]).toMatchObject({ status: 'failed', reason: 'runner_error' });
    expect(over.errors.join('\n')).toContain('more than 32 concurrent tool calls');
    expect([...ok.left, ...over.left]).toEqual([]);
  });
});
