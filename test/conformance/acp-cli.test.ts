import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { GEMINI_MODELS } from '../../adapters/acp/catalog.js';
import { CliRigs, GEMINI_TEST_VERSION } from '../support/one-works-cli.js';
import { startScriptedGemini } from '../support/scripted-gemini.js';

// The one-works commands around the ACP adapters with the real binaries from the conformance
// cache (Gemini CLI 0.61.0, droid 0.225.2 in ACP mode) and the SDK fake agent as `acp:fake`:
// adapters list / which / probe, doctor (a disabled adapter is not probed), models.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const FAKE_AGENT = fileURLToPath(new URL('../peers/fake-acp-agent', import.meta.url));

describe('ACP adapters: adapters, doctor, models', () => {
  it('disabled ACP adapters are neither listed nor probed by doctor', async () => {
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9' });
    const list = await rig.run(['--json', 'adapters', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    for (const name of ['gemini', 'droid-acp', 'acp:']) expect(list.stdout).not.toContain(name);
    const doctor = await rig.run(['doctor']);
    for (const name of ['gemini', 'droid-acp', 'acp:']) expect(doctor.stdout + doctor.stderr).not.toContain(name);
    const which = await rig.run(['adapters', 'which', 'gemini']);
    expect(which.exitCode).not.toBe(0);
    expect(which.stderr).toContain('adapters.gemini.enabled: true');
  });

  it('gemini: listed, located, probed over ACP without a prompt; models is the advisory list', async () => {
    const model = await startScriptedGemini({ steps: [{ text: 'hi' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl } });

    const list = await rig.run(['--json', 'adapters', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { adapter: string; version: string });
    expect(rows.find((r) => r.adapter === 'gemini')).toMatchObject({ version: GEMINI_TEST_VERSION });

    const which = await rig.run(['adapters', 'which', 'gemini']);
    expect(which.exitCode, which.stderr).toBe(0);
    expect(which.stdout.trim()).toMatch(new RegExp(`/cli/gemini/${GEMINI_TEST_VERSION}/bundle/gemini\\.js$`));

    const probe = await rig.run(['--json', 'adapters', 'probe', 'gemini']);
    expect(probe.exitCode, probe.stderr + probe.stdout).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({ adapter: 'gemini', ok: true, announced: { api: 'acp', protocolVersion: '1.0.0' } });
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(0);

    const models = await rig.run(['--json', 'models', '--adapter', 'gemini']);
    expect(models.exitCode, models.stderr).toBe(0);
    const ids = (JSON.parse(models.stdout) as { models: Array<{ id: string }> }).models.map((m) => m.id);
    expect(ids).toEqual(['scripted', ...GEMINI_MODELS]);
    const tools = await rig.run(['--json', 'tools', '--adapter', 'gemini']);
    expect(tools.exitCode, tools.stderr).toBe(0);
    expect(JSON.parse(tools.stdout).tools).toContainEqual(expect.objectContaining({ id: 'run_shell_command', category: 'execute' }));
  });

  it('gemini: doctor checks the binary and what it announces over ACP', async () => {
    const model = await startScriptedGemini({ steps: [] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl } });
    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toContain('ok    gemini binary:');
    expect(doctor.stdout).toContain('ok    gemini version facts: announced api acp, protocolVersion 1.0.0');
    expect(doctor.stdout).not.toMatch(/FAIL\s+gemini/);
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(0);
  });

  it('droid-acp and acp:<name>: probed over ACP and checked by doctor', async () => {
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      droidAcp: {},
      acp: { agents: { fake: { command: FAKE_AGENT } } },
    });
    const droid = await rig.run(['--json', 'adapters', 'probe', 'droid-acp']);
    expect(droid.exitCode, droid.stderr + droid.stdout).toBe(0);
    expect(JSON.parse(droid.stdout)).toMatchObject({ adapter: 'droid-acp', ok: true, announced: { api: 'acp', protocolVersion: '1.0.0' } });
    const fake = await rig.run(['--json', 'adapters', 'probe', 'acp:fake']);
    expect(fake.exitCode, fake.stderr + fake.stdout).toBe(0);
    expect(JSON.parse(fake.stdout)).toMatchObject({ adapter: 'acp:fake', ok: true, announced: { api: 'acp', protocolVersion: '1.0.0' } });
    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toContain('ok    droid-acp version facts: announced api acp, protocolVersion 1.0.0');
    expect(doctor.stdout).toContain('ok    acp:fake');
    expect(doctor.stdout).not.toMatch(/FAIL\s+(droid-acp|acp:fake)/);
  });
});
