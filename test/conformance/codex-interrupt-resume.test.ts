import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { type RigProcess, waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { type ResponsesStep, type ScriptedResponses, startScriptedResponses } from '../support/scripted-responses.js';

// The real Codex 0.171.0: an interrupt in the middle of a running command ends the turn as
// interrupted (`turn/interrupt`) with nothing left running, and a resume Codex cannot honour
// fails with session_load_failed instead of starting a fresh thread.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function responses(steps: ResponsesStep[]): Promise<ScriptedResponses> {
  const model = await startScriptedResponses({ steps });
  rigs.defer(() => model.close());
  return model;
}

async function waitForProcess(rig: CliRig, match: (p: RigProcess) => boolean): Promise<RigProcess[]> {
  for (let i = 0; i < 600; i += 1) {
    const now = rig.processes();
    if (now.some(match)) return now;
    await sleep(100);
  }
  throw new Error(`the expected process never appeared; saw ${JSON.stringify(rig.processes().map((p) => p.args))}`);
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

describe('codex: interrupt and resume', () => {
  it('SIGINT during a running command: the turn is interrupted (exit 130), the span closed, nothing survives', async () => {
    const model = await responses([
      { toolCalls: [{ name: 'exec_command', arguments: { cmd: "perl -e 'sleep 3031'" }, callId: 'call_int_1' }] },
      { text: 'never reached' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl, autonomy: 'high' } });
    const cli = rig.start(['run', '-A', 'codex', '--workspace', rig.workspace, 'wait a while']);
    const during = await waitForProcess(rig, (p) => p.args.startsWith('perl -e sleep 3031'));
    expect(
      during.some((p) => p.args.endsWith(' app-server')),
      'codex runs the command',
    ).toBe(true);
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'interrupted' });
    const results = (await rig.readEvents(id!)).filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolUseId: 'call_int_1', isError: true });
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
    expect(
      await waitForExit(
        during.map((p) => p.pid),
        15_000,
      ),
    ).toEqual([]);
    // The model was never asked to continue after the interrupt.
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
  });

  it('a resume Codex cannot honour fails with session_load_failed and never starts a fresh thread', async () => {
    const model = await responses([{ text: 'first' }, { text: 'must never be asked' }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });
    const first = await rig.run(['run', '-A', 'codex', '--workspace', rig.workspace, 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    await rig.closedEvents(id!);
    // Remove Codex's own records of the thread (its rollout and state databases) from the session HOME.
    const codexHome = join(rig.sessionHome(id!), '.codex');
    const rollouts = (await filesUnder(join(codexHome, 'sessions'))).filter((f) => f.includes(record.nativeSessionId!));
    expect(rollouts).toHaveLength(1);
    for (const file of rollouts) await rm(file);
    for (const file of await readdir(codexHome)) if (file.includes('.sqlite')) await rm(join(codexHome, file));

    const second = await rig.run(['--json', 'send', id!, 'continue']);
    expect(second.exitCode).not.toBe(0);
    expect(second.stdout + second.stderr).toContain('session_load_failed');
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
    const after = await rig.readSession(id!);
    expect(after.nativeSessionId).toBe(record.nativeSessionId);
    expect(after.runs.at(-1)?.status).toBe('failed');
  });
});
