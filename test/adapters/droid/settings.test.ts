import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SeedFile } from '../../../core/adapter.js';
import { isOneWorksError } from '../../../core/errors.js';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { DROID_BUILTIN_ALLOWLIST, workspaceAllowlist } from '../../../adapters/droid/native-permissions.js';
import {
  MANAGED_SETTINGS_PATH,
  MAX_SKILL_FILE_BYTES,
  MCP_TOKEN_VARIABLE,
  composeDroidSettings,
  droidSettingsEnv,
} from '../../../adapters/droid/settings.js';

const TOKEN = 'one-works-mcp-test-token';
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ow-settings-'));
  dirs.push(dir);
  return dir;
}

const json = (files: SeedFile[], path: string): Record<string, unknown> => {
  const file = files.find((f) => f.path === path);
  if (!file) throw new Error(`no seed file ${path}`);
  return JSON.parse(file.content) as Record<string, unknown>;
};

const MCP_SERVERS = {
  docs: { type: 'stdio', command: '/usr/bin/docs-mcp', args: ['--ro'], env: { DOCS_TOKEN: 'tok-env-1234' } },
  tracker: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer tok-hdr-5678' } },
  events: { type: 'sse', url: 'http://127.0.0.1:9000/sse' },
};

describe('composeDroidSettings', () => {
  it('writes private settings.json and an empty mcp.json that admits no server by default', () => {
    const { files, secrets } = composeDroidSettings(DroidConfigSchema.parse({}), { mcpToken: TOKEN });
    expect(files.map((f) => [f.path, f.mode])).toEqual([
      ['.factory/settings.json', 0o600],
      [MANAGED_SETTINGS_PATH, 0o600],
      ['.factory/mcp.json', 0o600],
    ]);
    expect(json(files, MANAGED_SETTINGS_PATH)).toEqual({
      mcpPolicy: { enabled: true, allowlist: [] },
      commandDenylist: [...DROID_BUILTIN_ALLOWLIST],
      allowManagedHooksOnly: true,
    });
    const settings = json(files, '.factory/settings.json');
    expect(settings.mcpPolicy).toEqual({ enabled: true, allowlist: [] });
    expect(settings.cloudSessionSync).toBe(false);
    expect(settings).not.toHaveProperty('hooks');
    // droid's own autonomy is always off and its built-in allowlist is denied: droid asks, One Works decides.
    expect(settings.sessionDefaultSettings).toMatchObject({ autonomyLevel: 'off' });
    expect(settings.commandDenylist).toEqual([
      'ls',
      'pwd',
      'dir',
      'git status',
      'git diff',
      'git log',
      'git show',
      'git blame',
      'git ls-files',
    ]);
    expect(json(files, '.factory/mcp.json')).toEqual({ mcpServers: {} });
    expect(secrets).toEqual([]);
  });

  it("adds the workspace's own commandAllowlist to droid's deny list, at the user and the managed level", async () => {
    const workspace = await tempDir();
    await mkdir(join(workspace, '.factory'));
    await writeFile(join(workspace, '.factory', 'settings.json'), JSON.stringify({ commandAllowlist: ['echo', 'npm test', 7, ''] }));
    await writeFile(join(workspace, '.factory', 'settings.local.json'), '{ not json');
    expect(workspaceAllowlist(workspace)).toEqual(['echo', 'npm test']);
    expect(workspaceAllowlist(join(workspace, 'missing'))).toEqual([]);
    const { files } = composeDroidSettings(DroidConfigSchema.parse({}), { mcpToken: TOKEN, alsoDenied: ['echo', 'ls'] });
    for (const path of ['.factory/settings.json', MANAGED_SETTINGS_PATH]) {
      expect(json(files, path).commandDenylist).toEqual([...DROID_BUILTIN_ALLOWLIST, 'echo']);
    }
  });

  it('writes YAML hooks as droid native hooks, leaving out empty events', () => {
    const hooks = {
      PreToolUse: [{ matcher: 'Execute', hooks: [{ type: 'command', command: '/h pre', timeout: 10 }] }],
      PostToolUse: [{ hooks: [{ type: 'command', command: '/h post' }] }],
      Stop: [],
    };
    const { files } = composeDroidSettings(DroidConfigSchema.parse({ hooks }), { mcpToken: TOKEN });
    const expected = { PreToolUse: hooks.PreToolUse, PostToolUse: hooks.PostToolUse };
    expect(json(files, '.factory/settings.json').hooks).toEqual(expected);
    // The managed level carries the same hooks and lets only managed hooks run, so each runs once.
    expect(json(files, MANAGED_SETTINGS_PATH)).toMatchObject({ hooks: expected, allowManagedHooksOnly: true });
  });

  it('writes MCP servers into mcp.json, stdio ones behind the token, and allowlists exactly them', () => {
    const { files, secrets } = composeDroidSettings(DroidConfigSchema.parse({ mcpServers: MCP_SERVERS }), { mcpToken: TOKEN });
    expect(json(files, '.factory/mcp.json')).toEqual({
      mcpServers: {
        docs: {
          type: 'stdio',
          command: '/usr/bin/env',
          args: [`${MCP_TOKEN_VARIABLE}=${TOKEN}`, '/usr/bin/docs-mcp', '--ro'],
          env: { DOCS_TOKEN: 'tok-env-1234' },
        },
        tracker: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer tok-hdr-5678' } },
        events: { type: 'sse', url: 'http://127.0.0.1:9000/sse' },
      },
    });
    const policy = { enabled: true, allowlist: [TOKEN, 'mcp.example.com', '127.0.0.1'] };
    expect(json(files, '.factory/settings.json').mcpPolicy).toEqual(policy);
    expect(json(files, MANAGED_SETTINGS_PATH).mcpPolicy).toEqual(policy);
    expect(secrets).toEqual(['tok-env-1234', 'Bearer tok-hdr-5678']);
  });

  it('draws a fresh random token for each composition', () => {
    const config = DroidConfigSchema.parse({ mcpServers: { docs: MCP_SERVERS.docs } });
    const allowlists = [0, 1].map(
      () => (json(composeDroidSettings(config).files, '.factory/settings.json').mcpPolicy as { allowlist: string[] }).allowlist,
    );
    expect(allowlists[0]?.[0]).toMatch(/^one-works-mcp-[0-9a-f]{24}$/);
    expect(allowlists[0]).not.toEqual(allowlists[1]);
  });

  it('merges configContent over settings.json, never over the managed level', () => {
    const config = DroidConfigSchema.parse({ configContent: { mcpPolicy: { enabled: false }, hooksDisabled: true } });
    const { files } = composeDroidSettings(config, { mcpToken: TOKEN });
    const settings = json(files, '.factory/settings.json');
    expect(settings.mcpPolicy).toEqual({ enabled: false, allowlist: [] });
    expect(settings.hooksDisabled).toBe(true);
    expect(json(files, MANAGED_SETTINGS_PATH).mcpPolicy).toEqual({ enabled: true, allowlist: [] });
  });

  it('points droid at the managed settings inside the session home', () => {
    expect(droidSettingsEnv('/state/sessions/s-1/home')).toEqual({
      FACTORY_ORG_MANAGED_SETTINGS_LOCAL_PATH: `/state/sessions/s-1/home/${MANAGED_SETTINGS_PATH}`,
    });
  });

  it('leaves hooks, MCP servers and skills out of a throwaway composition', async () => {
    const skill = join(await tempDir(), 'notes');
    await mkdir(skill);
    await writeFile(join(skill, 'SKILL.md'), '---\nname: notes\n---\n');
    const config = DroidConfigSchema.parse({
      mcpServers: MCP_SERVERS,
      hooks: { Stop: [{ hooks: [{ type: 'command', command: '/h' }] }] },
      skills: [skill],
    });
    const { files, secrets } = composeDroidSettings(config, { mcpToken: TOKEN, scope: 'throwaway' });
    expect(files.map((f) => f.path)).toEqual(['.factory/settings.json', MANAGED_SETTINGS_PATH, '.factory/mcp.json']);
    expect(json(files, MANAGED_SETTINGS_PATH)).toEqual({
      mcpPolicy: { enabled: true, allowlist: [] },
      commandDenylist: [...DROID_BUILTIN_ALLOWLIST],
      allowManagedHooksOnly: true,
    });
    expect(json(files, '.factory/settings.json')).not.toHaveProperty('hooks');
    expect(json(files, '.factory/settings.json').mcpPolicy).toEqual({ enabled: true, allowlist: [] });
    expect(json(files, '.factory/mcp.json')).toEqual({ mcpServers: {} });
    expect(secrets).toEqual([]);
  });
});

describe('composeDroidSettings: skills', () => {
  it('copies every file of a skill directory under .factory/skills/<name>/, executables 0700', async () => {
    const skill = join(await tempDir(), 'release-notes');
    await mkdir(join(skill, 'scripts'), { recursive: true });
    await writeFile(join(skill, 'SKILL.md'), '---\nname: release-notes\ndescription: Notes.\n---\nBody ✓\n');
    await writeFile(join(skill, 'scripts', 'collect.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const { files } = composeDroidSettings(DroidConfigSchema.parse({ skills: [skill] }), { mcpToken: TOKEN });
    const copied = files.filter((f) => f.path.startsWith('.factory/skills/')).sort((a, b) => (a.path < b.path ? -1 : 1));
    expect(copied).toEqual([
      {
        path: '.factory/skills/release-notes/SKILL.md',
        content: '---\nname: release-notes\ndescription: Notes.\n---\nBody ✓\n',
        mode: 0o600,
      },
      { path: '.factory/skills/release-notes/scripts/collect.sh', content: '#!/bin/sh\n', mode: 0o700 },
    ]);
  });

  it('rejects a bad skill directory with config_invalid naming its path', async () => {
    const root = await tempDir();
    const make = async (name: string, files: Record<string, string | Buffer>): Promise<string> => {
      const dir = join(root, name);
      await mkdir(dir);
      for (const [file, content] of Object.entries(files)) await writeFile(join(dir, file), content);
      return dir;
    };
    const linked = await make('linked', { 'SKILL.md': 'x' });
    await symlink('/etc/hostname', join(linked, 'host'));
    const cases: Array<[string, string]> = [
      [join(root, 'missing'), 'cannot be read: ENOENT'],
      [await make('no-skill-md', { 'README.md': 'x' }), 'has no SKILL.md file'],
      [linked, 'contains host, which is not a regular file (symlinks are not followed)'],
      [
        await make('binary', { 'SKILL.md': 'x', 'logo.png': Buffer.from([0x89, 0x50, 0xff, 0xfe]) }),
        'contains logo.png, which is not UTF-8 text',
      ],
      [await make('huge', { 'SKILL.md': 'x'.repeat(MAX_SKILL_FILE_BYTES + 1) }), 'is too large at SKILL.md'],
    ];
    for (const [dir, problem] of cases) {
      let caught: unknown;
      try {
        composeDroidSettings(DroidConfigSchema.parse({ skills: [dir] }), { mcpToken: TOKEN });
      } catch (error) {
        caught = error;
      }
      expect(isOneWorksError(caught, 'config_invalid'), dir).toBe(true);
      expect((caught as Error).message).toContain(`skill directory ${dir} (adapters.droid.skills[0]) ${problem}`);
    }
  });
});
