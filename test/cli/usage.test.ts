import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';

let box: CliSandbox;

beforeAll(async () => {
  box = await createCliSandbox();
});
afterAll(async () => {
  await box.remove();
});

describe('one-works usage', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('prints help listing the commands and exits 0', async () => {
    const result = await box.run(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Usage: one-works \[options\] \[command\]/);
    for (const command of ['config', 'adapters', 'doctor', 'run', 'send', 'sessions', 'events']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });

  it('prints the subcommands of adapters with --help', async () => {
    const result = await box.run(['adapters', '--help']);
    expect(result.exitCode).toBe(0);
    for (const command of ['list', 'which', 'install', 'probe', 'upgrade']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });

  it('prints the package version with --version and -V', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await box.run([flag]);
      expect(result.exitCode).toBe(0);
      expect(result.stdout.trim()).toBe(pkg.version);
    }
  });

  it.each([
    { args: ['frobnicate'], error: "error: unknown command 'frobnicate'", usage: 'Usage: one-works [options] [command]' },
    { args: ['--frobnicate'], error: "error: unknown option '--frobnicate'", usage: 'Usage: one-works [options] [command]' },
    { args: ['config', 'check', '--frobnicate'], error: "error: unknown option '--frobnicate'", usage: 'Usage: one-works config check' },
    {
      args: ['adapters', 'upgrade', 'droid'],
      error: "error: missing required argument 'version'",
      usage: 'Usage: one-works adapters upgrade',
    },
  ])('exits 2 with a usage message and no stack for $args', async ({ args, error, usage }) => {
    const result = await box.run(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(error);
    expect(result.stderr).toContain(usage);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(result.stdout).toBe('');
  });
});
