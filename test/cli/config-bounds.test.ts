import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CONFIG_BYTES } from '../../core/config/load.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';

// Through the real `one-works` binary: a config file that is too large or an alias bomb is a
// configuration error (exit 2, a message naming the file), not an internal one or a 2 GB parse;
// a secret reaching a non-secret field through ${VAR} is never echoed (with or without
// --verbose); a URL with userinfo in a BYOK baseUrl is refused naming the key, and its password
// is never printed nor written anywhere.

let box: CliSandbox;
beforeEach(async () => {
  box = await createCliSandbox();
});
afterEach(async () => {
  await box.remove();
});

const SECRET = 'fk-secret-from-env-4c9e1a77';
const URL_KEY = 'url-password-9d2b6e0c';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('config bounds and what config errors print', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('refuses a config file over the size cap with exit 2, before parsing it', async () => {
    await box.writeConfig(`workspaces:\n  approved:\n${'    - [a, b, c]\n'.repeat(Math.ceil(MAX_CONFIG_BYTES / 16) + 10)}`);
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.trim()).toBe(
      `one-works: one-works.yaml: the file is larger than ${MAX_CONFIG_BYTES / 1024} KiB, the most a config file may be; is this the right file?`,
    );
  });

  it('refuses a YAML alias bomb with exit 2, not an internal error', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
      const prev = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    await box.writeConfig(`${levels.join('\n')}\nworkspaces: {approved: *g}\n`);
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('one-works: one-works.yaml: YAML aliases expand too often (more than 100 times)');
    expect(result.stderr).not.toContain('internal error');
  });

  it('never prints a ${VAR} value in a validation message, with or without --verbose', async () => {
    await box.writeConfig('adapters:\n  droid:\n    effort: ${SECRET_VAR}\n    cli:\n      version: ${SECRET_VAR}\n');
    for (const args of [
      ['config', 'check'],
      ['--verbose', 'config', 'check'],
      ['--json', 'run', 'hello'],
    ]) {
      const result = await box.run(args, { SECRET_VAR: SECRET });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stdout + result.stderr).not.toContain(SECRET);
      expect(result.stdout + result.stderr).not.toContain(SECRET.slice(0, 12));
      expect(result.stderr).toContain(
        'one-works.yaml:3:13: adapters.droid.effort: expected one of low|medium|high|xhigh|max, got a value from the environment (not shown)',
      );
      expect(result.stderr).toMatch(/one-works\.yaml:5:16: adapters\.droid\.cli\.version: expected an exact semver version/);
    }
    const verbose = await box.run(['--verbose', 'config', 'check'], { SECRET_VAR: SECRET });
    expect(verbose.stderr).toMatch(STACK_LINE);
  });

  it('refuses userinfo in a BYOK baseUrl naming the key; the password is printed nowhere and written nowhere', async () => {
    await box.writeConfig(
      [
        'adapters:',
        '  droid:',
        '    customModels:',
        '      - model: m',
        `        baseUrl: "http://user:${URL_KEY}@127.0.0.1:9/v1"`,
        '        apiKey: sk-some-model-key',
        '        provider: openai',
        '',
      ].join('\n'),
    );
    const before = new Set(await filesUnder(box.root));
    for (const args of [['config', 'check'], ['--json', 'config', 'check'], ['--verbose', 'run', 'hello'], ['doctor']]) {
      const result = await box.run(args);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stdout + result.stderr).not.toContain(URL_KEY);
      expect(result.stderr).toContain(
        "one-works.yaml:5:18: adapters.droid.customModels[0].baseUrl: a user or password in the URL would be written in clear to the session's .factory/settings.json; remove it and put the key in apiKey",
      );
    }
    // Nothing One Works wrote (state, cache, anything new under the sandbox) holds the password.
    for (const file of await filesUnder(box.root)) {
      if (before.has(file)) continue;
      expect((await readFile(file)).includes(URL_KEY), file).toBe(false);
    }
  });

  it('masks the userinfo of a URL it echoes in a message', async () => {
    await box.writeConfig(
      `adapters:\n  droid:\n    mcpServers:\n      docs:\n        type: http\n        url: "http://u:${URL_KEY}@bad host/mcp"\n`,
    );
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('adapters.droid.mcpServers.docs.url: expected a valid URL, got "http://***@bad host/mcp"');
    expect(result.stdout + result.stderr).not.toContain(URL_KEY);
  });
});
