import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';

// state.backend: postgres is configurable and its URL is a secret. The fleet commands talk to
// the database (one that does not answer is state_unavailable, exit 6); the commands that need
// the local state directory refuse it (usage, exit 2) rather than quietly use the directory.
// Neither message holds the URL or its password.
const PASSWORD = 'pg-pass-61c3e0';
const URL = `postgres://ow:${PASSWORD}@127.0.0.1:9/fleet`;
const CONFIG = `state:
  backend: postgres
  postgres:
    url: \${OW_TEST_DATABASE_URL}
`;

let box: CliSandbox;
beforeEach(async () => {
  box = await createCliSandbox();
});
afterEach(async () => {
  await box.remove();
});

describe('state.backend', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('config check shows the backend and masks the database URL taken from the environment', async () => {
    await box.writeConfig(CONFIG);
    const result = await box.run(['config', 'check'], { OW_TEST_DATABASE_URL: URL });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^ {2}backend: postgres$/m);
    expect(result.stdout).toMatch(/^ {4}url: "\*\*\*"$/m);
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
  });

  it('a postgres backend without a URL is a config error naming the key', async () => {
    await box.writeConfig('state:\n  backend: postgres\n');
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('state.postgres');
  });

  it('sessions with an unreachable database fails with state_unavailable, without the URL', async () => {
    await box.writeConfig(CONFIG);
    const result = await box.run(['sessions', '--json'], { OW_TEST_DATABASE_URL: URL });
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toContain('the state database 127.0.0.1:9/fleet cannot be used');
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
  });

  it('commands that need the state directory refuse the postgres backend with usage, without the URL', async () => {
    await box.writeConfig(CONFIG);
    for (const args of [
      ['sessions', 'archive', 's-0123456789'],
      ['diff', 's-0123456789'],
    ]) {
      const result = await box.run(args, { OW_TEST_DATABASE_URL: URL });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stdout + result.stderr).toContain('not available with state.backend postgres');
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    }
  });

  it('fleet needs the postgres backend', async () => {
    const result = await box.run(['fleet']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('fleet needs a fleet: set state.backend: postgres');
  });
});
