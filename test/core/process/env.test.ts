import { describe, expect, it } from 'vitest';
import { buildChildEnv, INHERITED_ENV_VARS } from '../../../core/process/index.js';
import { isOneWorksError } from '../../../core/errors.js';

const HOME = '/state/sessions/s-1/home';

const polluted: Record<string, string | undefined> = {
  PATH: '/usr/bin:/bin',
  LANG: 'C.UTF-8',
  TERM: 'xterm-256color',
  USER: 'dev',
  TZ: undefined,
  HOME: '/home/dev',
  XDG_CONFIG_HOME: '/home/dev/.config',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  FACTORY_API_KEY: 'fk-secret',
  FACTORY_TOKEN: '',
  NODE_OPTIONS: '--require /tmp/evil.js',
  LD_PRELOAD: '/tmp/evil.so',
  SSH_AUTH_SOCK: '/tmp/ssh.sock',
};

describe('buildChildEnv', () => {
  it('keeps only the allowlist, the sandbox roots and the named credentials that are set', () => {
    const env = buildChildEnv({ parentEnv: polluted, home: HOME, credentials: ['FACTORY_API_KEY', 'FACTORY_TOKEN'] });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      USER: 'dev',
      HOME,
      XDG_CONFIG_HOME: `${HOME}/.config`,
      XDG_CACHE_HOME: `${HOME}/.cache`,
      XDG_DATA_HOME: `${HOME}/.local/share`,
      XDG_STATE_HOME: `${HOME}/.local/state`,
      FACTORY_API_KEY: 'fk-secret',
    });
  });

  it('copies every allowlisted variable that is set', () => {
    const parentEnv = Object.fromEntries(INHERITED_ENV_VARS.map((name) => [name, `v-${name}`]));
    const env = buildChildEnv({ parentEnv, home: HOME });
    for (const name of INHERITED_ENV_VARS) expect(env[name]).toBe(`v-${name}`);
    expect(Object.keys(env)).toHaveLength(INHERITED_ENV_VARS.length + 5);
  });

  it('adds the launch additions on top of the allowlist', () => {
    const env = buildChildEnv({ parentEnv: polluted, home: HOME, additions: { TERM: 'dumb', FACTORY_LOG: 'debug' } });
    expect(env.TERM).toBe('dumb');
    expect(env.FACTORY_LOG).toBe('debug');
    expect(env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
  });

  it('takes credentials given as name → value, skipping unset ones', () => {
    const env = buildChildEnv({ parentEnv: {}, home: HOME, credentials: { FACTORY_API_KEY: 'k-1', FACTORY_TOKEN: undefined } });
    expect(env.FACTORY_API_KEY).toBe('k-1');
    expect('FACTORY_TOKEN' in env).toBe(false);
  });

  it('refuses additions that would move HOME or an XDG root out of the sandbox', () => {
    for (const name of ['HOME', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME']) {
      let caught: unknown;
      try {
        buildChildEnv({ parentEnv: {}, home: HOME, additions: { [name]: '/home/dev' } });
      } catch (error) {
        caught = error;
      }
      expect(isOneWorksError(caught, 'internal')).toBe(true);
      expect((caught as Error).message).toContain(name);
    }
  });

  it('refuses a relative home', () => {
    expect(() => buildChildEnv({ parentEnv: {}, home: 'relative/home' })).toThrow(/absolute/);
  });
});
