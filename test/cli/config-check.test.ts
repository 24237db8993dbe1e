import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';

// Secrets written in the file, taken from ${ENV} interpolation and from the credential defaults.
const LITERAL_KEY = 'sk-literal-4b1d9e';
const HEADER_VALUE = 'hdr-value-77c0aa';
const INTERPOLATED_KEY = 'sk-interpolated-2f8e61';
const FILE_CREDENTIAL = 'fk-file-credential-93d1';
const ENV_TOKEN = 'ft-env-token-5a0c3b';
const SECRETS = [LITERAL_KEY, HEADER_VALUE, INTERPOLATED_KEY, FILE_CREDENTIAL, ENV_TOKEN];

const SECRET_CONFIG = `# a project config
adapters:
  droid:
    model: custom:Local-0
    customModels:
      - model: local-model
        displayName: Local
        baseUrl: http://127.0.0.1:9/v1
        apiKey: ${LITERAL_KEY}
        provider: openai
        extraHeaders:
          X-Team: ${HEADER_VALUE}
      - model: other-model
        baseUrl: http://127.0.0.1:9/v1
        apiKey: \${OTHER_MODEL_KEY}
        provider: openai
    credentials:
      FACTORY_API_KEY: ${FILE_CREDENTIAL}
`;

let box: CliSandbox;

beforeEach(async () => {
  box = await createCliSandbox();
});
afterEach(async () => {
  await box.remove();
});

const secretEnv = { OTHER_MODEL_KEY: INTERPOLATED_KEY, FACTORY_TOKEN: ENV_TOKEN };

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe('one-works config check with secrets', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('prints the effective config with every secret shown as ***', async () => {
    await box.writeConfig(SECRET_CONFIG);
    const result = await box.run(['config', 'check'], secretEnv);
    expect(result.exitCode).toBe(0);
    expectNoSecret(result.stdout + result.stderr);
    expect(result.stderr).toContain(`config: ${box.configPath}`);
    // Two apiKeys, one header, two credentials: five masks, the rest printed as is.
    expect(result.stdout.match(/: "\*\*\*"$/gm)).toHaveLength(5);
    expect(result.stdout).toMatch(/^ {8}apiKey: "\*\*\*"$/m);
    expect(result.stdout).toMatch(/^ {10}X-Team: "\*\*\*"$/m);
    expect(result.stdout).toMatch(/^ {6}FACTORY_API_KEY: "\*\*\*"$/m);
    expect(result.stdout).toMatch(/^ {6}FACTORY_TOKEN: "\*\*\*"$/m);
    expect(result.stdout).toContain('baseUrl: http://127.0.0.1:9/v1');
    expect(result.stdout).toMatch(/^ {6}range: ">=0\.225\.0 <0\.226\.0"$/m);
  });

  it('prints one JSON object with --json, secrets masked', async () => {
    await box.writeConfig(SECRET_CONFIG);
    const result = await box.run(['--json', 'config', 'check'], secretEnv);
    expect(result.exitCode).toBe(0);
    expectNoSecret(result.stdout + result.stderr);
    const lines = result.stdout.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]!) as {
      path: string;
      config: { adapters: { droid: { customModels: { apiKey: string; extraHeaders?: unknown }[]; credentials: unknown; cli: unknown } } };
    };
    expect(parsed.path).toBe(box.configPath);
    const droid = parsed.config.adapters.droid;
    expect(droid.customModels.map((m) => m.apiKey)).toEqual(['***', '***']);
    expect(droid.customModels[0]!.extraHeaders).toEqual({ 'X-Team': '***' });
    expect(droid.credentials).toEqual({ FACTORY_API_KEY: '***', FACTORY_TOKEN: '***' });
    expect(droid.cli).toEqual({ source: 'managed', version: '0.225.2', range: '>=0.225.0 <0.226.0' });
  });

  it('does not echo a wrongly typed secret in the error', async () => {
    await box.writeConfig(['adapters:', '  droid:', '    credentials:', '      FACTORY_API_KEY: 73914402', ''].join('\n'));
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('one-works.yaml:4:24: adapters.droid.credentials.FACTORY_API_KEY: expected a string, got ***');
    expect(result.stdout + result.stderr).not.toContain('73914402');
  });
});

describe('one-works config check with a bad file', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it.each([
    {
      what: 'an unknown key, with a suggestion',
      yaml: ['adapters:', '  droid:', '    modle: custom:Local-0'],
      line: 'one-works.yaml:3:5: adapters.droid.modle: unknown key; did you mean "model"?',
    },
    {
      what: 'an unknown effort, listing the accepted values',
      yaml: ['adapters:', '  droid:', '    effort: ultra'],
      line: 'one-works.yaml:3:13: adapters.droid.effort: expected one of low|medium|high|xhigh|max, got "ultra"',
    },
    {
      what: 'a range where the pin belongs',
      yaml: ['adapters:', '  droid:', '    cli:', '      version: ^0.225.0'],
      line: 'one-works.yaml:4:16: adapters.droid.cli.version: expected an exact semver version such as 0.225.2, got "^0.225.0" (a range belongs in cli.range)',
    },
    {
      what: 'a pin that is no version at all',
      yaml: ['adapters:', '  droid:', '    cli:', '      version: latest'],
      line: 'one-works.yaml:4:16: adapters.droid.cli.version: expected an exact semver version such as 0.225.2, got "latest"',
    },
    {
      what: 'a relative approved workspace',
      yaml: ['workspaces:', '  approved:', '    - projects/app'],
      line: 'one-works.yaml:3:7: workspaces.approved[0]: expected an absolute path, got "projects/app"',
    },
    {
      what: 'a ~ path',
      yaml: ['state:', '  directory: ~/state'],
      line: 'one-works.yaml:2:14: state.directory: expected an absolute path, got "~/state" (~ is not expanded; write the full path)',
    },
  ])('exits 2 on $what with file:line:col: key.path: expectation and no stack', async ({ yaml, line }) => {
    await box.writeConfig(`${yaml.join('\n')}\n`);
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`one-works: ${line}`);
  });

  it('reports every problem of a file at once, one line each in file order', async () => {
    await box.writeConfig(
      [
        'workspaces:',
        '  approved: [relative/dir]',
        'adapters:',
        '  droid:',
        '    modle: x',
        '    effort: ultra',
        '    cli:',
        '      version: ^0.225.0',
        '',
      ].join('\n'),
    );
    // With --json stdout stays empty (machine-readable) and the error is one JSON line on stderr
    // with its stable code; the message is the same lines as without --json.
    const result = await box.run(['--json', 'config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
    expect(parsed.error.code).toBe('config_invalid');
    expect(parsed.error.message.split('\n')).toEqual([
      'one-works.yaml:2:14: workspaces.approved[0]: expected an absolute path, got "relative/dir"',
      'one-works.yaml:5:5: adapters.droid.modle: unknown key; did you mean "model"?',
      'one-works.yaml:6:13: adapters.droid.effort: expected one of low|medium|high|xhigh|max, got "ultra"',
      'one-works.yaml:8:16: adapters.droid.cli.version: expected an exact semver version such as 0.225.2, got "^0.225.0" (a range belongs in cli.range)',
    ]);
  });

  it('names a file given with --config outside the working directory by its absolute path', async () => {
    const outside = join(box.root, 'elsewhere.yaml');
    await writeFile(outside, 'sandbox: docker\n');
    const result = await box.run(['--config', outside, 'config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(`one-works: ${outside}:1:10: sandbox: expected one of none|bwrap, got "docker"`);
  });

  it('shows the droid fallback in the effective config and refuses an unknown one naming the key', async () => {
    await box.writeConfig('adapters:\n  droid:\n    fallback: none\n');
    const shown = await box.run(['--json', 'config', 'check']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { config: { adapters: { droid: { fallback: string } } } }).config.adapters.droid.fallback).toBe(
      'none',
    );
    await box.writeConfig('adapters:\n  droid:\n    fallback: exec\n');
    const refused = await box.run(['config', 'check']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/one-works\.yaml:3:15: adapters\.droid\.fallback: expected one of oneshot\|none, got "exec"/);
  });

  it('exits 2 without a stack when --config names a missing file', async () => {
    const result = await box.run(['--config', 'missing.yaml', 'config', 'check']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(`one-works: cannot read config file ${join(box.cwd, 'missing.yaml')}: ENOENT`);
    expect(result.stderr).not.toMatch(STACK_LINE);
  });
});

describe('one-works config check without a config file', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('says that the current directory alone is approved', async () => {
    const result = await box.run(['config', 'check']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('no config file');
    expect(result.stderr).toMatch(/the current directory \S+ approved alone/);
    expect(result.stdout).toMatch(/^state:\n {2}backend: file\n {2}directory: .+\/home\/\.local\/state\/one-works$/m);
  });

  it('shows the current directory as the only approved root in the effective config', async () => {
    const result = await box.run(['--json', 'config', 'check']);
    expect(result.exitCode).toBe(0);
    const parsed = JSON.parse(result.stdout) as { path: string | null; config: { workspaces: { approved: string[] } } };
    expect(parsed.path).toBeNull();
    // The CLI approves the working directory alone (cli/context.ts approvedRoots); the
    // "effective configuration" should say so rather than print an empty list.
    expect(parsed.config.workspaces.approved).toEqual([box.cwd]);
  });
});
