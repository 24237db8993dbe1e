import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_TEST_VERSION, CliRigs } from '../support/one-works-cli.js';
import { startScriptedAnthropic } from '../support/scripted-anthropic.js';

// The one-works commands around the claude-code adapter, with the real Claude Code binary from
// the conformance cache: adapters list / which / probe, doctor, models, sessions list.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('claude-code: adapters, doctor, models, sessions', () => {
  it('an adapter the config does not enable is neither listed nor checked', async () => {
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9' });
    const list = await rig.run(['--json', 'adapters', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).not.toContain('claude-code');
    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).not.toContain('claude-code');
    const which = await rig.run(['adapters', 'which', 'claude-code']);
    expect(which.exitCode).not.toBe(0);
    expect(which.stderr).toContain('adapters.claude-code.enabled: true');
  });

  it('lists, locates, probes and checks an enabled claude-code, and lists its advisory models', async () => {
    const model = await startScriptedAnthropic({ steps: [{ text: 'hi' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });

    const list = await rig.run(['--json', 'adapters', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { adapter: string; version: string; qualification?: string });
    expect(rows.map((r) => r.adapter)).toEqual(['droid', 'claude-code']);
    expect(rows[1]).toMatchObject({ version: CLAUDE_TEST_VERSION });

    const which = await rig.run(['adapters', 'which', 'claude-code']);
    expect(which.exitCode, which.stderr).toBe(0);
    expect(which.stdout.trim()).toMatch(new RegExp(`/cli/claude-code/${CLAUDE_TEST_VERSION}/claude$`));

    const probe = await rig.run(['--json', 'adapters', 'probe', 'claude-code']);
    expect(probe.exitCode, probe.stderr + probe.stdout).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({
      adapter: 'claude-code',
      ok: true,
      announced: { claudeCodeVersion: CLAUDE_TEST_VERSION },
    });
    // The probe sends no prompt: the model was never asked.
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(0);

    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toContain(`ok    claude-code binary:`);
    expect(doctor.stdout).toContain(
      `ok    claude-code version facts: announced claudeCodeVersion ${CLAUDE_TEST_VERSION}; expected claudeCodeVersion ${CLAUDE_TEST_VERSION} (table)`,
    );
    expect(doctor.stdout).not.toMatch(/FAIL\s+claude-code/);

    const models = await rig.run(['--json', 'models', '--adapter', 'claude-code']);
    expect(models.exitCode, models.stderr).toBe(0);
    const ids = (JSON.parse(models.stdout) as { models: Array<{ id: string }> }).models.map((m) => m.id);
    expect(ids).toEqual(['scripted', 'sonnet', 'opus', 'haiku', 'fable']);

    const run = await rig.run(['run', '-A', 'claude-code', '--workspace', rig.workspace, 'hello']);
    expect(run.exitCode, run.stderr).toBe(0);
    const sessions = await rig.run(['sessions']);
    expect(sessions.stdout).toMatch(/ claude-code {2,}idle /);
  });
});
