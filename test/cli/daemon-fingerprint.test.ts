import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createContext } from '../../cli/context.js';
import { describeDifference } from '../../cli/daemon/connect-matching.js';
import { differingParts, environmentFingerprint, serverIdentity } from '../../cli/daemon/fingerprint.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const CONFIG = ['workspaces: { approved: [/tmp] }', 'adapters:', '  droid:', '    env: { PROXY_URL: "${ONE_WORKS_FP_PROXY}" }', ''].join(
  '\n',
);

async function configFile(text: string): Promise<string> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-fp-')));
  roots.push(root);
  const path = join(root, 'one-works.yaml');
  await writeFile(path, text);
  return path;
}

const BASE_ENV = { PATH: '/usr/bin:/bin', HOME: '/home/fp', XDG_STATE_HOME: '/tmp/fp-state', ONE_WORKS_FP_PROXY: 'http://proxy-a' };

async function fingerprint(config: string, env: Record<string, string>): Promise<string> {
  return environmentFingerprint(await createContext({ config }, { ...BASE_ENV, ...env }));
}

// The parts where a client with `env` differs from a server started with the base environment.
async function differing(config: string, env: Record<string, string>): Promise<string[]> {
  const server = serverIdentity(await createContext({ config }, BASE_ENV));
  return differingParts(await createContext({ config }, { ...BASE_ENV, ...env }), server);
}

describe('environment fingerprint', () => {
  it('is a stable sha256 of the config and environment, never a value', async () => {
    const config = await configFile(CONFIG);
    const first = await fingerprint(config, { FACTORY_API_KEY: 'fk-secret-1' });
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await fingerprint(config, { FACTORY_API_KEY: 'fk-secret-1' })).toBe(first);
  });

  it('changes with a ${VAR} the config uses, a credential, an inherited variable, and the config bytes', async () => {
    const config = await configFile(CONFIG);
    const base = await fingerprint(config, {});
    expect(await fingerprint(config, { ONE_WORKS_FP_PROXY: 'http://proxy-b' })).not.toBe(base);
    expect(await fingerprint(config, { FACTORY_API_KEY: 'exported-later' })).not.toBe(base);
    expect(await fingerprint(config, { LANG: 'C.UTF-8' })).not.toBe(base);
    const edited = await configFile(`# a comment\n${CONFIG}`);
    expect(await fingerprint(edited, {})).not.toBe(await fingerprint(config, {}));
  });

  it('ignores the presentation variables TERM, COLORTERM and NO_COLOR (they travel with each turn)', async () => {
    const config = await configFile(CONFIG);
    const tmux = await fingerprint(config, { TERM: 'screen-256color', COLORTERM: 'truecolor' });
    expect(await fingerprint(config, { TERM: 'xterm', NO_COLOR: '1' })).toBe(tmux);
    expect(await fingerprint(config, {})).toBe(tmux);
  });

  it('names the parts that differ from a server through keyed digests, never values', async () => {
    const config = await configFile(CONFIG);
    const base = { PATH: '/usr/bin:/bin', HOME: '/home/fp', XDG_STATE_HOME: '/tmp/fp-state', ONE_WORKS_FP_PROXY: 'http://proxy-a' };
    const server = serverIdentity(await createContext({ config }, { ...base, LANG: 'C' }));
    expect(JSON.stringify(server)).not.toContain('proxy-a');
    const client = await createContext({ config }, { ...base, LANG: 'C.UTF-8', ONE_WORKS_FP_PROXY: 'http://proxy-b', TERM: 'xterm' });
    expect(differingParts(client, server)).toEqual(['config adapters.droid.env.PROXY_URL', 'env LANG']);
    // Another server (another key) gives other digests of the same values.
    const again = serverIdentity(await createContext({ config }, { ...base, LANG: 'C' }));
    expect(again.digests['env LANG']).not.toBe(server.digests['env LANG']);
    expect(again.fingerprint).toBe(server.fingerprint);
  });

  it('ignores variables that reach neither the config nor the children', async () => {
    const config = await configFile(CONFIG);
    expect(await fingerprint(config, { ONE_WORKS_UNRELATED: 'x', AWS_SECRET_ACCESS_KEY: 'y' })).toBe(await fingerprint(config, {}));
  });

  it('changes with a credential exported for an adapter block the file leaves out, named as its config key', async () => {
    const config = await configFile('workspaces: { approved: [/tmp] }\n');
    const exported = {
      FACTORY_API_KEY: 'adapters.droid.credentials.FACTORY_API_KEY',
      FACTORY_TOKEN: 'adapters.droid.credentials.FACTORY_TOKEN',
      ANTHROPIC_API_KEY: 'adapters.claude-code.credentials.ANTHROPIC_API_KEY',
      CLAUDE_CODE_OAUTH_TOKEN: 'adapters.claude-code.credentials.CLAUDE_CODE_OAUTH_TOKEN',
      OPENAI_API_KEY: 'adapters.codex.credentials.OPENAI_API_KEY',
      GEMINI_API_KEY: 'adapters.gemini.credentials.GEMINI_API_KEY',
    };
    for (const [variable, key] of Object.entries(exported)) {
      expect(await differing(config, { [variable]: 'exported-after-the-server' })).toEqual([`config ${key}`]);
    }
    // Set but empty is unset, for the loader too.
    expect(await differing(config, { FACTORY_API_KEY: '' })).toEqual([]);
  });

  it('changes with a ${VAR} anywhere in the file, named as the key it fills', async () => {
    const config = await configFile(
      ['workspaces: { approved: ["${ONE_WORKS_FP_ROOT:-/tmp}"] }', 'state: { directory: "${ONE_WORKS_FP_STATE:-/tmp/fp-a}" }', ''].join(
        '\n',
      ),
    );
    expect(await differing(config, { ONE_WORKS_FP_ROOT: '/srv' })).toEqual(['approved roots', 'config workspaces.approved']);
    expect(await differing(config, { ONE_WORKS_FP_STATE: '/tmp/fp-b' })).toEqual(['config state.directory']);
    // The same value as the default: the server runs turns the same way.
    expect(await differing(config, { ONE_WORKS_FP_ROOT: '/tmp' })).toEqual([]);
  });

  it("changes with a host variable that a block's passEnv or an ACP agent's credentials let through, and only then", async () => {
    const passing = await configFile(
      [
        'workspaces: { approved: [/tmp] }',
        'adapters:',
        '  claude-code: { enabled: true, passEnv: [HTTPS_PROXY] }',
        '  acp: { enabled: true, agents: { local: { command: local-agent, credentials: [LOCAL_AGENT_KEY] } } }',
        '',
      ].join('\n'),
    );
    expect(await differing(passing, { HTTPS_PROXY: 'http://proxy:3128' })).toEqual(['env HTTPS_PROXY']);
    expect(await differing(passing, { LOCAL_AGENT_KEY: 'lk-1' })).toEqual(['env LOCAL_AGENT_KEY']);
    // TERM travels with each turn, but one a passEnv lets through is read from the server's environment.
    const term = await configFile('workspaces: { approved: [/tmp] }\nadapters: { codex: { enabled: true, passEnv: [TERM] } }\n');
    expect(await differing(term, { TERM: 'screen-256color' })).toEqual(['env TERM']);
    const plain = await configFile('workspaces: { approved: [/tmp] }\nadapters: { claude-code: { enabled: true } }\n');
    expect(await differing(plain, { HTTPS_PROXY: 'http://proxy:3128', LOCAL_AGENT_KEY: 'lk-1' })).toEqual([]);
  });

  it('says which parts differ by name, the One Works version among them', async () => {
    const config = await configFile(CONFIG);
    const ctx = await createContext({ config }, BASE_ENV);
    const server = serverIdentity(ctx);
    // A server of another version: its digest of the version part is not this process's.
    const other = { ...server.digests, 'one-works version': '0'.repeat(64) };
    expect(describeDifference(ctx, { digestKey: server.key, digests: other })).toBe('One Works version');
    expect(describeDifference(ctx, { digestKey: server.key, digests: server.digests })).toBe('config or environment');
  });
});
