import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INHERITED_ENV_VARS, SESSION_XDG_DIRS } from '../../core/process/env.js';
import { CliRigs } from '../support/one-works-cli.js';
import { processEnv, type RigProcess } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';

// droid and the commands it runs see an allowlisted environment: the CLI's parent environment
// holds canaries that must not cross, HOME and the XDG roots point into the session home.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

const CANARIES: Record<string, string> = {
  ONE_WORKS_CANARY: 'canary-value-123',
  AWS_SECRET_ACCESS_KEY: 'aws-canary-secret-9876',
  GITHUB_TOKEN: 'ghp_canaryTokenValue5555',
  OPENAI_API_KEY: 'sk-openai-canary-4444',
};

// What One Works itself adds to droid's environment (sandbox roots, the launch's additions,
// and `adapters.droid.env` of the rig's config).
// HOME and XDG roots, the auto-update switches, the YAML's env, the BYOK key variable the
// isolated settings reference (never written to disk), and the managed-settings path.
const ADDED_BY_ONE_WORKS = [
  'HOME',
  ...Object.keys(SESSION_XDG_DIRS),
  'DROID_DISABLE_AUTO_UPDATE',
  'FACTORY_DROID_AUTO_UPDATE_ENABLED',
  'FACTORY_AIRGAP_ENABLED',
  'ONE_WORKS_BYOK_KEY_0',
  'FACTORY_ORG_MANAGED_SETTINGS_LOCAL_PATH',
];

// Parses `env` output (NAME=value lines; the trailer droid appends does not match).
function parseEnv(output: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of output.split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

describe('one-works run: the agent sees an allowlisted environment', () => {
  it('passes no canary to droid or its tools, points HOME and XDG into the session home', async () => {
    const rigRef: { processes?: () => RigProcess[] } = {};
    let droidEnv: Record<string, string> = {};
    const model = await rigs.model({
      steps: [
        {
          toolCalls: [
            {
              id: 'call_env_allowlist_1',
              name: 'Execute',
              arguments: { command: 'env', riskLevel: 'low', riskLevelReason: 'prints the environment' },
            },
          ],
        },
        () => {
          // droid is alive and waiting for this reply: read its own environment.
          const droid = rigRef.processes?.().find((p) => p.args.includes(' exec --input-format stream-jsonrpc'));
          droidEnv = droid ? processEnv(droid.pid) : {};
          return { text: 'Printed it.' };
        },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    rigRef.processes = () => rig.processes();
    const parentEnv: Record<string, string> = {
      HOME: rig.userHome,
      LANG: 'C.UTF-8',
      TZ: 'UTC',
      USER: 'ow-env-test',
      XDG_CONFIG_HOME: join(rig.userHome, '.config'),
      XDG_CACHE_HOME: join(rig.userHome, '.cache'),
      ...CANARIES,
    };

    const result = await rig.run(['run', '--workspace', rig.workspace, 'print the environment'], {
      env: { ...parentEnv, FACTORY_API_KEY: undefined },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const home = rig.sessionHome(id!);
    const toolOutput = (await rig.readEvents(id!)).flatMap((e) => (e.type === 'tool.result' ? [e.output] : [])).join('\n');
    const seenByModel = toolResults(model.requests.find((r) => r.kind === 'step' && r.stepIndex === 1)!)
      .map((r) => r.content)
      .join('\n');
    const parent = { PATH: process.env.PATH ?? '', ...parentEnv };

    for (const [label, env, text] of [
      ['tool', parseEnv(toolOutput), toolOutput],
      [
        'droid',
        droidEnv,
        Object.entries(droidEnv)
          .map(([k, v]) => `${k}=${v}`)
          .join('\n'),
      ],
    ] as const) {
      expect(Object.keys(env).length, `${label} environment was read`).toBeGreaterThan(5);
      for (const [name, value] of Object.entries(CANARIES)) {
        expect(text, label).not.toContain(name);
        expect(text, label).not.toContain(value);
      }
      expect(env.FACTORY_API_KEY, label).toBeUndefined();
      expect(env.HOME, label).toBe(home);
      for (const [name, dir] of Object.entries(SESSION_XDG_DIRS)) expect(env[name], `${label} ${name}`).toBe(join(home, dir));
      expect(env, label).toMatchObject({
        DROID_DISABLE_AUTO_UPDATE: 'true',
        FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
        FACTORY_AIRGAP_ENABLED: 'true',
        LANG: 'C.UTF-8',
        TZ: 'UTC',
        USER: 'ow-env-test',
      });
      // Whatever equals the parent's value crossed through the allowlist, nothing else.
      const inherited = Object.keys(env).filter((name) => parent[name as keyof typeof parent] === env[name]);
      expect(
        inherited.filter((name) => !(INHERITED_ENV_VARS as readonly string[]).includes(name)),
        label,
      ).toEqual([]);
    }
    // droid's own environment is exactly the allowlist plus what One Works adds; droid adds its
    // own variables (GIT_*, FACTORY_DISABLE_SETTINGS_PERSISTENCE, ...) only for its tools.
    const allowed = new Set<string>([...INHERITED_ENV_VARS, ...ADDED_BY_ONE_WORKS]);
    expect(Object.keys(droidEnv).filter((name) => !allowed.has(name))).toEqual([]);
    expect(seenByModel).toContain(`HOME=${home}`);
    for (const value of Object.values(CANARIES)) expect(seenByModel).not.toContain(value);
  });
});
