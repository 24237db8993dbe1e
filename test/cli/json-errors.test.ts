import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';

// Through the real `one-works` binary: with --json an error is one JSON line on stderr carrying
// the error's stable code and its message (a program reads the code, not prose); stdout stays
// empty; the exit code is the same as without --json; a secret in the message is redacted.

let box: CliSandbox;
beforeEach(async () => {
  box = await createCliSandbox();
});
afterEach(async () => {
  await box.remove();
});

const SECRET = 'fk-json-error-secret-7d41c0b2';

describe('--json errors', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a missing session: {"error":{"code":"session_not_found",…}} on stderr, nothing on stdout, same exit code', async () => {
    const human = await box.run(['sessions', 'show', 'no-such-session']);
    const result = await box.run(['--json', 'sessions', 'show', 'no-such-session']);
    expect(result.exitCode).toBe(human.exitCode);
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
    expect(parsed.error.code).toBe('session_not_found');
    expect(parsed.error.message).toContain('no-such-session');
    expect(human.stderr).toContain(`one-works: ${parsed.error.message}`);
  });

  it('a config error carries its code; a ${VAR} value it concerns is never printed', async () => {
    await box.writeConfig('adapters:\n  droid:\n    effort: ${SECRET_VAR}\n');
    const result = await box.run(['--json', 'config', 'check'], { SECRET_VAR: SECRET });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const parsed = JSON.parse(result.stderr.trim()) as { error: { code: string; message: string } };
    expect(parsed.error.code).toBe('config_invalid');
    expect(parsed.error.message).toContain('adapters.droid.effort: expected one of');
    expect(result.stderr).not.toContain(SECRET.slice(0, 12));
  });
});
