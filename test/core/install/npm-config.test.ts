import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRY, parseNpmrc, readNpmConfig } from '../../../core/install/index.js';

describe('parseNpmrc', () => {
  it('reads keys, skips comments and sections, strips quotes and expands ${VAR}', () => {
    const text = [
      '; a comment',
      '# another',
      '[section]',
      'registry = "https://r.example/npm/"',
      '@acme:registry=https://acme.example',
      '//acme.example/:_authToken=${ACME_TOKEN}',
      'not a pair',
    ].join('\r\n');
    const entries = parseNpmrc(text, { ACME_TOKEN: 'tok-123' });
    expect(Object.fromEntries(entries)).toEqual({
      registry: 'https://r.example/npm/',
      '@acme:registry': 'https://acme.example',
      '//acme.example/:_authToken': 'tok-123',
    });
  });

  it('expands an unset variable to an empty string', () => {
    expect(parseNpmrc('//h/:_authToken=${MISSING}', {}).get('//h/:_authToken')).toBe('');
  });
});

describe('readNpmConfig', () => {
  let root: string;
  let project: string;
  let home: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ow-npmrc-'));
    project = path.join(root, 'project');
    home = path.join(root, 'home');
    await Promise.all([mkdir(project), mkdir(home)]);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('defaults to the public registry when nothing is configured', async () => {
    const config = await readNpmConfig({ projectDir: project, homeDir: home, env: {} });
    expect(config).toEqual({ registry: DEFAULT_REGISTRY, scopes: {}, authTokens: {} });
  });

  it('lets the project .npmrc override ~/.npmrc, and npm_config_registry override both', async () => {
    await writeFile(
      path.join(home, '.npmrc'),
      'registry=https://user.example\n@acme:registry=https://acme-user.example/\n//user.example/:_authToken=user-token\n',
    );
    await writeFile(path.join(project, '.npmrc'), 'registry=https://project.example/\n');
    const fromFiles = await readNpmConfig({ projectDir: project, homeDir: home, env: {} });
    expect(fromFiles).toEqual({
      registry: 'https://project.example/',
      scopes: { '@acme': 'https://acme-user.example/' },
      authTokens: { '//user.example/': 'user-token' },
    });
    const fromEnv = await readNpmConfig({ projectDir: project, homeDir: home, env: { npm_config_registry: 'https://env.example' } });
    expect(fromEnv.registry).toBe('https://env.example/');
    const upperCase = await readNpmConfig({ projectDir: project, homeDir: home, env: { NPM_CONFIG_REGISTRY: 'https://upper.example/' } });
    expect(upperCase.registry).toBe('https://upper.example/');
  });

  it('reads the user config from npm_config_userconfig when set', async () => {
    const other = path.join(root, 'other.npmrc');
    await writeFile(other, '@acme:registry=https://acme.example/\n');
    const config = await readNpmConfig({ projectDir: project, homeDir: home, env: { npm_config_userconfig: other } });
    expect(config.scopes).toEqual({ '@acme': 'https://acme.example/' });
  });
});
