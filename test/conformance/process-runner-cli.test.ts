import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TSX_LOADER } from '../peers/fake-droid-binary.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { HARNESS, referenceRig } from './process-runner-support.js';

// `adapters probe` and `doctor` with a process harness: the runner is started in a throwaway
// sandbox, opened passively (no model call) and stopped; a runner that never answers open fails
// the probe with a clear message.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const FAKE_RUNNER = fileURLToPath(new URL('../peers/fake-runner.ts', import.meta.url));

describe('process runner: probe and doctor', () => {
  it('probes the reference runner by a passive open: protocol runner-frame 1.0.0, no model request', async () => {
    const { rig, model } = await referenceRig(rigs, []);
    const probe = await rig.run(['--json', 'adapters', 'probe', `process:${HARNESS}`]);
    expect(probe.exitCode, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({ announced: { api: 'runner-frame', protocolVersion: '1.0.0' } });
    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toMatch(/ok\s+process:ref version facts: announced api runner-frame, protocolVersion 1\.0\.0/);
    expect(model.requests).toEqual([]);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('a runner that never answers open fails the probe, naming the deadline', async () => {
    const { rig } = await referenceRig(rigs, [], {
      command: process.execPath,
      args: ['--import', TSX_LOADER, FAKE_RUNNER, 'silent-open'],
      openTimeoutMs: 1_000,
    });
    const probe = await rig.run(['adapters', 'probe', `process:${HARNESS}`]);
    expect(probe.exitCode).not.toBe(0);
    expect(probe.stderr).toContain('no answer to open within 1000 ms');
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
