import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFakeDroidBinary } from '../peers/fake-droid-binary.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';

// `config check` and `doctor` warn about a config that is valid but will not work; only doctor
// contacts anything (a BYOK endpoint, here a loopback HTTP server counting its requests).

let box: CliSandbox;
let endpoint: Server;
let requests: string[];
let baseUrl: string;

beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-warn-' });
  requests = [];
  endpoint = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  await box.remove();
});

async function configure(options: { approved: string[]; model: string; deadUrl?: string }): Promise<void> {
  const fake = join(box.root, 'fake');
  await mkdir(fake);
  const binary = await writeFakeDroidBinary(fake, {});
  await box.writeConfig(
    [
      `state: { directory: ${join(box.root, 'state')} }`,
      `cache: { directory: ${join(box.root, 'cache')} }`,
      `workspaces: { approved: [${options.approved.join(', ')}] }`,
      'adapters:',
      '  droid:',
      `    cli: { source: path, path: ${binary}, version: 0.225.2 }`,
      `    model: "${options.model}"`,
      '    customModels:',
      `      - { model: local, baseUrl: "${baseUrl}", apiKey: sk-warn-key-1234, provider: generic-chat-completion-api }`,
      ...(options.deadUrl
        ? [`      - { model: gone, baseUrl: "${options.deadUrl}", apiKey: sk-warn-key-5678, provider: generic-chat-completion-api }`]
        : []),
      '',
    ].join('\n'),
  );
}

describe('config check warns, without contacting anything', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('about an approved root that does not exist and a default model no BYOK model declares', async () => {
    const missing = join(box.root, 'no-such-dir');
    await configure({ approved: [box.cwd, missing], model: 'custom:Nope-0' });
    const check = await box.run(['config', 'check']);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stderr).toContain(`warning: approved root ${missing} does not exist (workspaces.approved)`);
    expect(check.stderr).toContain('warning: adapters.droid.model custom:Nope-0 is not among the declared BYOK models (custom:local-0)');
    const json = await box.run(['--json', 'config', 'check']);
    expect((JSON.parse(json.stdout) as { warnings: string[] }).warnings).toHaveLength(2);
    expect(requests).toEqual([]);
  });

  it('about an empty approved list', async () => {
    await configure({ approved: [], model: 'custom:local-0' });
    const check = await box.run(['config', 'check']);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stderr).toContain('warning: workspaces.approved is empty: no workspace can run');
    expect(check.stderr.match(/^warning:/gm)).toHaveLength(1);
  });
});

describe('doctor warns and reports the orchestrator', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('names the config warnings, contacts each BYOK endpoint, and says whether an orchestrator runs', async () => {
    const missing = join(box.root, 'no-such-dir');
    // A port nothing listens on: bound and closed again.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await configure({ approved: [missing], model: 'custom:Nope-0', deadUrl: `http://127.0.0.1:${deadPort}/v1` });

    const doctor = await box.run(['doctor']);
    expect(doctor.stdout).toContain(`warn  workspaces: approved root ${missing} does not exist (workspaces.approved)`);
    expect(doctor.stdout).toContain('warn  droid model: adapters.droid.model custom:Nope-0 is not among the declared BYOK models');
    expect(doctor.stdout).toContain(`ok    droid BYOK custom:local-0: ${baseUrl} answers (HTTP 404)`);
    expect(doctor.stdout).toMatch(
      new RegExp(`warn {2}droid BYOK custom:gone-0: http://127\\.0\\.0\\.1:${deadPort}/v1 does not answer \\(ECONNREFUSED\\)`),
    );
    expect(doctor.stdout).toContain(`ok    orchestrator: not running for ${join(box.root, 'state')}`);
    expect(requests).toEqual(['GET /v1/models']);
    expect(doctor.stdout).not.toContain('sk-warn-key');
  });
});
