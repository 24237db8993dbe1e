import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createContext } from '../../cli/context.js';
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

async function fingerprint(config: string, env: Record<string, string>): Promise<string> {
  const base = { PATH: '/usr/bin:/bin', HOME: '/home/fp', XDG_STATE_HOME: '/tmp/fp-state', ONE_WORKS_FP_PROXY: 'http://proxy-a' };
  return environmentFingerprint(await createContext({ config }, { ...base, ...env }));
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
});
