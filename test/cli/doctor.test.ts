import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFakeDroidBinary, type FakeDroidBinaryOptions } from '../peers/fake-droid-binary.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, processesReferring, type CliSandbox } from '../support/cli-runner.js';

const ENV_API_KEY = 'fk-env-api-key-61c2d0';
const FILE_TOKEN = 'ft-file-token-0e9b44';
const MODEL_KEY = 'sk-model-key-a7d313';

let box: CliSandbox;
let stateDir: string;
let cacheDir: string;

beforeEach(async () => {
  box = await createCliSandbox({ privateTmp: true });
  stateDir = join(box.root, 'state');
  cacheDir = join(box.root, 'cache');
});
afterEach(async () => {
  await box.remove();
});

// A fake droid (speaks the stream-jsonrpc handshake) at `source: path`, with credentials and a BYOK key.
async function configure(fake: FakeDroidBinaryOptions = {}): Promise<string> {
  const dir = join(box.root, 'fake');
  await mkdir(dir);
  const binary = await writeFakeDroidBinary(dir, fake);
  await box.writeConfig(
    [
      `state:\n  directory: ${stateDir}`,
      `cache:\n  directory: ${cacheDir}`,
      'adapters:',
      '  droid:',
      `    cli:\n      source: path\n      path: ${binary}\n      version: 0.225.2`,
      '    customModels:',
      `      - model: local\n        baseUrl: http://127.0.0.1:9/v1\n        apiKey: ${MODEL_KEY}\n        provider: openai`,
      `    credentials:\n      FACTORY_TOKEN: ${FILE_TOKEN}`,
      '',
    ].join('\n'),
  );
  return binary;
}

async function makeStateDir(mode: number): Promise<void> {
  await mkdir(stateDir);
  await chmod(stateDir, mode);
}

// Doctor runs a probe: afterwards no child may be left and its throwaway directories must be gone.
async function expectNothingLeft(): Promise<void> {
  expect(processesReferring(box.root)).toEqual([]);
  expect((await readdir(box.tmp)).filter((name) => name.startsWith('one-works-'))).toEqual([]);
}

describe('one-works doctor', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('prints ok/FAIL lines, fails on a 0755 state dir with a chmod hint, and never prints credentials', async () => {
    const binary = await configure();
    await makeStateDir(0o755);
    const result = await box.run(['doctor'], { FACTORY_API_KEY: ENV_API_KEY });
    // A state directory problem: exit 6, as everywhere else (README, exit codes).
    expect(result.exitCode).toBe(6);
    expect(result.stdout.split('\n')).toEqual([
      `ok    droid binary: ${binary} (path) runs and reports 0.225.2`,
      'ok    droid version: 0.225.2 within >=0.225.0 <0.226.0',
      'ok    droid version facts: announced apiVersion 1.0.0, protocolVersion 1.220.0; expected apiVersion 1.0.0, protocolVersion 1.220.0 (table)',
      `ok    cache: ${cacheDir} is writable`,
      `FAIL  state dir: ${stateDir} has mode 0755; run \`chmod 700 ${stateDir}\``,
      `ok    orchestrator: not running for ${stateDir} (started on demand)`,
      'warn  workspaces: workspaces.approved is empty: no workspace can run; add the directories agents may work in',
      'ok    droid FACTORY_API_KEY: present (not shown)',
      'ok    droid FACTORY_TOKEN: present (not shown)',
      'warn  droid BYOK custom:local-0: http://127.0.0.1:9/v1 does not answer (bad port); turns with custom:local-0 will fail',
      expect.stringMatching(/^warn {2}droid limitation Task: subagent calls run without asking One Works; /),
    ]);
    for (const secret of [ENV_API_KEY, FILE_TOKEN, MODEL_KEY]) expect(result.stdout + result.stderr).not.toContain(secret);
    await expectNothingLeft();
  });

  it('exits 0 when everything is in order, with a private state dir', async () => {
    await configure();
    await makeStateDir(0o700);
    const result = await box.run(['doctor'], { FACTORY_API_KEY: ENV_API_KEY });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`ok    state dir: ${stateDir} is private (0700)`);
    expect(result.stdout).not.toMatch(/^FAIL/m);
    await expectNothingLeft();
  });

  // A warning does not fail the doctor (exit 0) but must be labelled as one, not as "ok".
  it('fails with exit 6 when the state dir is not a directory, and exit 4 first when the binary is missing', async () => {
    const binary = await configure();
    await writeFile(stateDir, 'not a directory');
    const state = await box.run(['doctor']);
    expect(state.exitCode).toBe(6);
    expect(state.stdout).toContain(`FAIL  state dir: ${stateDir} is not a directory`);
    await rm(binary);
    const missing = await box.run(['doctor']);
    expect(missing.stdout).toMatch(/^FAIL {2}droid binary: /m);
    expect(missing.exitCode).toBe(4);
  });

  it('labels a state dir that does not exist yet as a warning', async () => {
    await configure();
    const result = await box.run(['doctor'], { FACTORY_API_KEY: ENV_API_KEY });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`warn  state dir: ${stateDir} does not exist yet (created 0700 on first run)`);
  });

  // README: doctor prints each adapter's declared limitations (issue 17): droid's Task sub-agents.
  it("prints droid's declared limitation as a warning, without failing", async () => {
    await configure();
    const result = await box.run(['doctor'], { FACTORY_API_KEY: ENV_API_KEY });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('warn  droid limitation Task: subagent calls run without asking One Works;');
    expect(result.stdout).toContain("the policy's deny, denyPaths, writeBoundary, autonomy rules do not hold for them");
  });

  // README: doctor reports "credentials present or not (never printed)".
  it('reports a credential that is not set', async () => {
    await configure();
    await makeStateDir(0o700);
    const result = await box.run(['doctor']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('ok    droid FACTORY_TOKEN: present (not shown)');
    expect(result.stdout).toContain('warn  droid FACTORY_API_KEY: not set');
  });

  it('fails the protocol line when the binary announces another protocol than the table', async () => {
    await configure({ faults: ['wrong-protocol'], protocol: '1.219.0' });
    await makeStateDir(0o700);
    const result = await box.run(['doctor']);
    // A protocol problem: exit 5, as a session refused for it.
    expect(result.exitCode).toBe(5);
    expect(result.stdout).toContain(
      'FAIL  droid version facts: announced apiVersion 1.0.0, protocolVersion 1.219.0; expected apiVersion 1.0.0, protocolVersion 1.220.0 (table): protocol 1.219.0, but the built-in table records 1.220.0 for 0.225.2',
    );
    await expectNothingLeft();
  });

  it('prints one JSON object per check with --json', async () => {
    await configure();
    await makeStateDir(0o755);
    const result = await box.run(['--json', 'doctor'], { FACTORY_API_KEY: ENV_API_KEY });
    expect(result.exitCode).toBe(6);
    const checks = result.stdout.split('\n').map((line) => JSON.parse(line) as { name: string; ok: boolean; detail: string });
    expect(checks.map((c) => [c.name, c.ok])).toEqual([
      ['droid binary', true],
      ['droid version', true],
      ['droid version facts', true],
      ['cache', true],
      ['state dir', false],
      ['orchestrator', true],
      ['workspaces', true],
      ['droid FACTORY_API_KEY', true],
      ['droid FACTORY_TOKEN', true],
      ['droid BYOK custom:local-0', true],
      ['droid limitation Task', true],
    ]);
    for (const secret of [ENV_API_KEY, FILE_TOKEN, MODEL_KEY]) expect(result.stdout + result.stderr).not.toContain(secret);
  });
});
