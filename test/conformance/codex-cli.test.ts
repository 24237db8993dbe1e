import { afterEach, describe, expect, it } from 'vitest';
import { CODEX_TEST_VERSION, CliRigs } from '../support/one-works-cli.js';
import { startScriptedResponses } from '../support/scripted-responses.js';

// The one-works commands around the codex adapter, with the real Codex binary from the
// conformance cache: adapters list / which / probe, doctor, models, sessions list.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('codex: adapters, doctor, models, sessions', () => {
  it('lists, locates, probes and checks an enabled codex, and lists its models from the app-server', async () => {
    const model = await startScriptedResponses({ steps: [{ text: 'hi' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });

    const list = await rig.run(['--json', 'adapters', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { adapter: string; version: string });
    expect(rows.map((r) => r.adapter)).toEqual(['droid', 'codex']);
    expect(rows[1]).toMatchObject({ version: CODEX_TEST_VERSION });

    const which = await rig.run(['adapters', 'which', 'codex']);
    expect(which.exitCode, which.stderr).toBe(0);
    expect(which.stdout.trim()).toMatch(new RegExp(`/cli/codex/${CODEX_TEST_VERSION}/vendor/x86_64-unknown-linux-musl/bin/codex$`));

    const probe = await rig.run(['--json', 'adapters', 'probe', 'codex']);
    expect(probe.exitCode, probe.stderr + probe.stdout).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({
      adapter: 'codex',
      ok: true,
      announced: { codexVersion: CODEX_TEST_VERSION },
    });
    // The probe sends no prompt: the model was never asked.
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(0);

    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toContain('ok    codex binary:');
    expect(doctor.stdout).toContain(
      `ok    codex version facts: announced codexVersion ${CODEX_TEST_VERSION}; expected codexVersion ${CODEX_TEST_VERSION} (table)`,
    );
    expect(doctor.stdout).not.toMatch(/FAIL\s+codex/);

    const models = await rig.run(['--json', 'models', '--adapter', 'codex']);
    expect(models.exitCode, models.stderr).toBe(0);
    const ids = (JSON.parse(models.stdout) as { models: Array<{ id: string; custom: boolean }> }).models;
    // The configured BYOK model first, then what `model/list` of the binary itself returned.
    expect(ids[0]).toMatchObject({ id: 'scripted-model', custom: true });
    expect(ids.length).toBeGreaterThan(1);
    expect(ids.slice(1).every((m) => m.custom === false)).toBe(true);

    const run = await rig.run(['run', '-A', 'codex', '--workspace', rig.workspace, 'hello']);
    expect(run.exitCode, run.stderr).toBe(0);
    const sessions = await rig.run(['sessions']);
    expect(sessions.stdout).toMatch(/ codex {2,}idle /);
  });
});
