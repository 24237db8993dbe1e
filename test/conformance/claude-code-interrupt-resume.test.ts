import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { type RigProcess, waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { type AnthropicStep, type ScriptedAnthropic, startScriptedAnthropic } from '../support/scripted-anthropic.js';

// The real Claude Code 2.1.333: an interrupt in the middle of a running tool ends the turn as
// interrupted with nothing left running, and a resume the CLI cannot honour fails with
// session_load_failed instead of starting a fresh conversation.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function anthropic(steps: AnthropicStep[]): Promise<ScriptedAnthropic> {
  const model = await startScriptedAnthropic({ steps });
  rigs.defer(() => model.close());
  return model;
}

async function waitForProcess(rig: CliRig, match: (p: RigProcess) => boolean): Promise<RigProcess[]> {
  for (let i = 0; i < 600; i += 1) {
    const now = rig.processes();
    if (now.some(match)) return now;
    await sleep(100);
  }
  throw new Error('the expected process never appeared');
}

describe('claude-code: interrupt and resume', () => {
  it('SIGINT during a running Bash tool: the turn is interrupted (exit 130), the span closed, nothing survives', async () => {
    // perl, not sleep: Claude Code 2.1.333 blocks long `sleep` commands before asking.
    const command = "perl -e 'sleep 3031'";
    const model = await anthropic([
      { toolCalls: [{ id: 'toolu_int_1', name: 'Bash', input: { command, description: 'wait' } }] },
      { text: 'never reached' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });
    const cli = rig.start(['run', '-A', 'claude-code', '--allow', 'perl', '--workspace', rig.workspace, 'wait a while']);
    const during = await waitForProcess(rig, (p) => p.args === 'perl -e sleep 3031');
    expect(
      during.some((p) => p.args.includes('--input-format stream-json')),
      'claude runs the tool',
    ).toBe(true);
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'interrupted' });
    const results = (await rig.readEvents(id!)).filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolUseId: 'toolu_int_1', isError: true });
    expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
    expect(
      await waitForExit(
        during.map((p) => p.pid),
        10_000,
      ),
    ).toEqual([]);
    // The model was never asked to continue after the interrupt.
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
  });

  it('a resume the CLI cannot honour fails with session_load_failed and never starts a fresh conversation', async () => {
    const model = await anthropic([{ text: 'first' }, { text: 'must never be asked' }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });
    const first = await rig.run(['run', '-A', 'claude-code', '--workspace', rig.workspace, 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    // Remove claude's own transcript of the session from the session HOME.
    const projects = join(rig.sessionHome(id!), '.claude', 'projects');
    const removed: string[] = [];
    for (const dir of await readdir(projects)) {
      for (const file of await readdir(join(projects, dir))) {
        if (file === `${record.nativeSessionId}.jsonl`) {
          await rm(join(projects, dir, file));
          removed.push(file);
        }
      }
    }
    expect(removed).toHaveLength(1);

    const second = await rig.run(['--json', 'send', id!, 'continue']);
    expect(second.exitCode).not.toBe(0);
    expect(second.stdout + second.stderr).toContain('session_load_failed');
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
    const after = await rig.readSession(id!);
    expect(after.nativeSessionId).toBe(record.nativeSessionId);
    expect(after.runs.at(-1)?.status).toBe('failed');
  });
});
