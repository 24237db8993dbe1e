import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import { lastUserText } from '../support/scripted-model.js';
import { chatMessages } from '../support/scripted-model-steps.js';
import { HARNESS, referenceRig } from './process-runner-support.js';

// `send --interrupt` while a process-runner turn is live (same settings): One Works sends a
// `steer` frame for the live turn instead of interrupting it, the reference runner adds the text
// to its conversation and its next model request carries it; the live run goes on (no new run)
// and the steering command follows it to its end.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;
// Waits (bounded, 60 s) for the test to create `go` in the workspace.
const WAIT_FOR_GO = 'i=0; while [ ! -f go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo released';

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('process runner: steer', () => {
  it('send --interrupt during a tool call steers: the runner’s next model request ends with the steer; one run, both commands see its end', async () => {
    const { rig, model } = await referenceRig(
      rigs,
      [
        { toolCalls: [{ id: 'call_wait', name: 'run_command', arguments: { command: WAIT_FOR_GO } }] },
        (request) => ({ text: `Steered by: ${lastUserText(request)}` }),
      ],
      { autonomy: 'high' },
    );
    const run = rig.start(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'start working']);
    await waitForProcess(
      () => rig.processes(),
      (p) => p.args.includes('while [ ! -f go ]'),
    );
    const [id] = await rig.sessionIds();

    const steer = rig.start(['send', id!, '--interrupt', 'also mention DELTA-4']);
    // The runner took the steer (the run's log records it) while the tool still waits.
    await until(async () => (await rig.readEvents(id!)).find((e) => e.type === 'log' && e.message.startsWith('steered run r1')), 60_000);
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
    await writeFile(join(rig.workspace, 'go'), '');

    const [ran, steered] = await Promise.all([run.result, steer.result]);
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(steered.exitCode, steered.stderr).toBe(0);
    expect(steered.stdout).toContain('Steered by: also mention DELTA-4');

    // The second model request: the tool's result, then the steer as the last user message.
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    const messages = chatMessages(steps[1]!).map((m) => `${String(m.role)}:${String(m.content)}`);
    expect(messages.slice(1)).toEqual([
      'user:start working',
      'assistant:null',
      'tool:released\n(exit code 0)',
      'user:also mention DELTA-4',
    ]);
    const record = await rig.readSession(id!);
    expect(record.runs).toHaveLength(1);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'Steered by: also mention DELTA-4' });
    const events = await rig.closedEvents(id!);
    expect(events.filter((e) => e.type === 'log' && e.message === 'steered run r1: also mention DELTA-4')).toHaveLength(1);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
