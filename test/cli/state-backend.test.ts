import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';

// state.backend: postgres is configurable and its URL is a secret, but no command uses it yet:
// they refuse it (config_invalid, exit 2) rather than quietly use the state directory.
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

  it('sessions and serve refuse the postgres backend with config_invalid, without the URL', async () => {
    await box.writeConfig(CONFIG);
    for (const args of [['sessions', '--json'], ['serve']]) {
      const result = await box.run(args, { OW_TEST_DATABASE_URL: URL });
      expect(result.exitCode).toBe(2);
      expect(result.stdout + result.stderr).toContain('state.backend is postgres');
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    }
  });
});
