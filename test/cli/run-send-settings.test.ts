import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFakeDroidBinary } from '../peers/fake-droid-binary.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, processesReferring, type CliSandbox } from '../support/cli-runner.js';
import type { SessionRecord } from '../../core/store/index.js';

let box: CliSandbox;
let stateDir: string;

beforeEach(async () => {
  box = await createCliSandbox();
  stateDir = join(box.root, 'state');
});
afterEach(async () => {
  await box.remove();
});

// The fake droid lists gpt-5.6-sol (low, medium, high; default high) and gpt-5.6-sol-mini
// (low, high; default low). The auto-started orchestrator exits 300 ms after it is idle.
async function configure(): Promise<void> {
  const dir = join(box.root, 'fake');
  await mkdir(dir);
  const binary = await writeFakeDroidBinary(dir);
  await box.writeConfig(
    [
      `state:\n  directory: ${stateDir}`,
      `cache:\n  directory: ${join(box.root, 'cache')}`,
      `workspaces:\n  approved: [${box.cwd}]`,
      'orchestrator:\n  idleExitMs: 300',
      'adapters:',
      '  droid:',
      `    cli:\n      source: path\n      path: ${binary}\n      version: 0.225.2`,
      '    model: gpt-5.6-sol',
      '    effort: medium',
      '    credentials:\n      FACTORY_TOKEN: ft-token-5f01',
      '',
    ].join('\n'),
  );
}

describe('run and send leave model and effort checks to the orchestrator', () => {
  it(
    'send -m gives the new model its catalog default effort instead of refusing the previous effort client-side',
    async () => {
      await configure();
      const first = await box.run(['--json', 'run', 'hello']);
      expect(first.exitCode, first.stderr).toBe(0);
      const sessionId = (JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { sessionId: string }).sessionId;

      const second = await box.run(['send', sessionId, 'again', '-m', 'gpt-5.6-sol-mini']);
      expect(second.exitCode, second.stderr).toBe(0);
      const { runs } = JSON.parse(await readFile(join(stateDir, 'sessions', sessionId, 'session.json'), 'utf8')) as SessionRecord;
      expect(runs.map((run) => [run.id, run.status, run.model, run.effort])).toEqual([
        ['r1', 'completed', 'gpt-5.6-sol', 'medium'],
        ['r2', 'completed', 'gpt-5.6-sol-mini', 'low'],
      ]);

      // An unsupported effort is still refused, by the orchestrator, with its code's exit status.
      const refused = await box.run(['send', sessionId, 'third', '-e', 'medium']);
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toMatch(/does not support reasoning effort "medium"/);
      await expect.poll(() => processesReferring(box.root), { timeout: 15_000 }).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
