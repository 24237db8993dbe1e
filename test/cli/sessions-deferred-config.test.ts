import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, processesReferring, type CliSandbox } from '../support/cli-runner.js';
import { killQuietly } from '../support/rig-processes.js';

// Issue 15: the commands that read only the state (`sessions`, `events`) parse no adapter block at
// load (core/config/load.ts deferredBlocks). From the user's side: what they print still has every
// secret of those blocks redacted, and an adapter block that `run` refuses does not stop them.

const LITERAL_KEY = 'sk-literal-3c9d1e';
const HEADER_VALUE = 'hdr-value-51ab07';
const FILE_CREDENTIAL = 'fk-file-credential-6e2f';
const ENV_TOKEN = 'ft-env-token-8d4c2a';
const SECRETS = [LITERAL_KEY, HEADER_VALUE, FILE_CREDENTIAL, ENV_TOKEN];
const ID = 's-00deadbeef';

let box: CliSandbox;
let stateDir: string;

beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-deferred-' });
  stateDir = join(box.root, 'state');
});
afterEach(async () => {
  for (const left of processesReferring(box.root)) killQuietly(left.pid);
  await box.remove();
});

function configWith(droidBlock: string[]): string {
  return [`state: { directory: ${stateDir} }`, `workspaces: { approved: [${box.cwd}] }`, 'adapters:', '  droid:', ...droidBlock, ''].join(
    '\n',
  );
}

// A session whose record and log hold the secrets as plain text, as a log written before One Works
// knew them would: only the command's own redactor stands between them and the terminal.
async function plantSession(): Promise<void> {
  const dir = join(stateDir, 'sessions', ID);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const at = '2026-01-01T00:00:00.000Z';
  const leak = `keys ${SECRETS.join(' ')}`;
  const record = {
    id: ID,
    adapter: 'droid',
    workspace: box.cwd,
    title: `title ${LITERAL_KEY}`,
    createdAt: at,
    updatedAt: at,
    status: 'idle',
    runs: [{ id: 'r1', prompt: leak, autonomy: 'low', status: 'completed', reason: 'completed', text: leak, usage: { reported: false } }],
  };
  await writeFile(join(dir, 'session.json'), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  const events = [
    { type: 'turn.queued', key: 'turn:r1:queued', runId: 'r1', prompt: leak, sessionId: ID, seq: 1, at },
    { type: 'assistant.message', key: 'msg:m1', messageId: 'm1', text: leak, sessionId: ID, seq: 2, at },
  ];
  await writeFile(join(dir, 'events.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
}

describe('sessions and events with adapter blocks parsed only when read', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("redact the droid block's secrets (file, header, credential, environment) in everything they print", async () => {
    await box.writeConfig(
      configWith([
        '    model: custom:Local-0',
        '    customModels:',
        `      - { model: local-model, displayName: Local, baseUrl: "http://127.0.0.1:9/v1", apiKey: ${LITERAL_KEY}, provider: openai, extraHeaders: { X-Team: ${HEADER_VALUE} } }`,
        `    credentials: { FACTORY_API_KEY: ${FILE_CREDENTIAL} }`,
      ]),
    );
    await plantSession();
    const env = { FACTORY_TOKEN: ENV_TOKEN };
    const runs = [
      await box.run(['sessions'], env),
      await box.run(['--json', 'sessions'], env),
      await box.run(['sessions', 'show', ID], env),
      await box.run(['--json', 'sessions', 'show', ID], env),
      await box.run(['events', ID], env),
      await box.run(['--json', 'events', ID], env),
    ];
    for (const result of runs) {
      expect(result.exitCode, result.stderr).toBe(0);
      for (const secret of SECRETS) expect(result.stdout + result.stderr).not.toContain(secret);
    }
    // What was there is shown, redacted: the secrets were found, not the lines dropped.
    expect(runs[4]!.stdout).toContain('keys [REDACTED] [REDACTED] [REDACTED] [REDACTED]');
  });

  it('list and show sessions over a droid block that run refuses, and run names the problem', async () => {
    await box.writeConfig(configWith(['    model: custom:Local-0', '    bogus: 1']));
    await plantSession();
    const listed = await box.run(['--json', 'sessions']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ sessionId: ID });
    expect((await box.run(['events', ID])).exitCode).toBe(0);
    // A command that could start an orchestrator refuses the block itself, before any server starts.
    const submitted = await box.run(['submit', 'hello']);
    expect(submitted.exitCode).toBe(2);
    expect(submitted.stderr).toMatch(/one-works\.yaml:6:\d+: adapters\.droid\.bogus/);
    expect(submitted.stderr).not.toContain('before it served');
    expect(existsSync(join(stateDir, 'orchestrator.log'))).toBe(false);
    const refused = await box.run(['run', 'hello']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/one-works\.yaml:6:\d+: adapters\.droid/);
    expect(refused.stderr).toContain('bogus');
    // The server `run` started for its intent before the config was read exits on the same error.
    await expect.poll(() => processesReferring(box.root), { timeout: 15_000 }).toEqual([]);
  });

  it('still refuse an adapter the config does not know', async () => {
    await box.writeConfig([`state: { directory: ${stateDir} }`, 'adapters:', '  nope: {}', ''].join('\n'));
    const result = await box.run(['sessions']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('nope');
  });
});
