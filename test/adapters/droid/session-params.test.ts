import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import {
  InitializeSessionWithPrompt,
  MAX_RULES_FILE_BYTES,
  composeSessionParams,
  resumedPromptNotice,
  skippedPlugins,
  systemPromptAppend,
} from '../../../adapters/droid/session-params.js';
import { collectSecrets, createConfigSchema, parseConfigText } from '../../../core/config/index.js';
import { isOneWorksError } from '../../../core/errors.js';

const schema = createConfigSchema({ droid: DroidConfigSchema });
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ow-params-'));
  dirs.push(dir);
  return dir;
}

// The config_invalid message parseConfigText throws for a droid block given as YAML lines.
function configError(droidYaml: string): string {
  const text = `adapters:\n  droid:\n${droidYaml.replace(/^/gm, '    ')}\n`;
  try {
    parseConfigText(text, { schema, env: {}, file: 'one-works.yaml' });
  } catch (error) {
    expect(isOneWorksError(error, 'config_invalid')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a config error');
}

describe('DroidConfigSchema: session parameter keys', () => {
  it('defaults to nothing extra', () => {
    const config = DroidConfigSchema.parse({});
    expect(config).toMatchObject({ rules: [], skills: [], disableBuiltinSkills: false, mcpServers: {}, hooks: {}, plugins: [] });
    expect(config.systemPrompt).toBeUndefined();
  });

  it('accepts a full block and marks MCP env and header values as secrets', () => {
    const config = parseConfigText(
      [
        'adapters:',
        '  droid:',
        '    systemPrompt: Be brief.',
        '    rules: [/etc/rules/STYLE.md]',
        '    skills: [/opt/skills/notes]',
        '    disableBuiltinSkills: true',
        '    mcpServers:',
        '      docs: { type: stdio, command: /usr/bin/docs-mcp, args: [--ro], env: { DOCS_TOKEN: tok-env-1234 } }',
        '      tracker: { type: http, url: "https://mcp.example.com/mcp", headers: { Authorization: Bearer tok-hdr-5678 } }',
        '    hooks:',
        '      PreToolUse: [{ matcher: Execute, hooks: [{ type: command, command: /bin/check, timeout: 5 }] }]',
        '    plugins: [some-plugin]',
      ].join('\n'),
      { schema, env: {}, file: 'one-works.yaml' },
    );
    const droid = config.adapters.droid;
    expect(droid.mcpServers.docs).toEqual({
      type: 'stdio',
      command: '/usr/bin/docs-mcp',
      args: ['--ro'],
      env: { DOCS_TOKEN: 'tok-env-1234' },
    });
    expect(droid.hooks.PreToolUse).toEqual([{ matcher: 'Execute', hooks: [{ type: 'command', command: '/bin/check', timeout: 5 }] }]);
    expect(collectSecrets(schema, config)).toEqual(['tok-env-1234', 'Bearer tok-hdr-5678']);
  });

  it('names the bad key of a wrong block', () => {
    expect(configError('rules: [STYLE.md]')).toContain('adapters.droid.rules[0]: expected an absolute path, got "STYLE.md"');
    expect(configError('mcpServers:\n  docs: { type: stdio, url: "http://x" }')).toMatch(
      /mcpServers\.docs\.command: required when type is "stdio"\n.*mcpServers\.docs\.url: not allowed when type is "stdio"/,
    );
    expect(configError('mcpServers:\n  web: { type: sse, url: "http://x", command: y }')).toContain(
      'mcpServers.web.command: not allowed when type is "sse"',
    );
    expect(configError('mcpServers:\n  "bad name": { type: http, url: "http://x" }')).toContain('invalid key "bad name"');
    expect(configError('mcpServers:\n  d: { type: stdio, command: "A=b" }')).toContain('expected a command without "="');
    expect(configError('hooks:\n  PreToolUs: []')).toContain('adapters.droid.hooks.PreToolUs: unknown key; did you mean "PreToolUse"?');
    expect(configError('hooks:\n  Stop: [{ hooks: [{ type: prompt, command: x }] }]')).toContain(
      'hooks.Stop[0].hooks[0].type: expected command',
    );
    expect(configError('hooks:\n  Stop: [{ hooks: [] }]')).toContain('hooks.Stop[0].hooks');
    expect(configError('skills: [/a/notes, /b/notes]')).toContain('skills[1]: duplicate skill name "notes" (also skills[0])');
    expect(configError('plugins: [""]')).toContain('plugins[0]');
  });
});

describe('systemPromptAppend', () => {
  it('joins systemPrompt and each rules file under a line naming it', () => {
    const rules = [
      { path: '/r/STYLE.md', content: 'Use tabs.\n\n' },
      { path: '/r/team/REVIEW.md', content: 'Small commits.' },
    ];
    expect(systemPromptAppend('Be brief.\n', rules)).toBe(
      'Be brief.\n\nInstructions from STYLE.md (/r/STYLE.md):\nUse tabs.\n\nInstructions from REVIEW.md (/r/team/REVIEW.md):\nSmall commits.',
    );
    expect(systemPromptAppend(undefined, rules.slice(1))).toBe('Instructions from REVIEW.md (/r/team/REVIEW.md):\nSmall commits.');
    expect(systemPromptAppend(undefined, [])).toBeUndefined();
  });
});

describe('composeSessionParams', () => {
  it('puts the prompt and disableBuiltinSkills into initialize, only disableBuiltinSkills into load', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'STYLE.md'), 'Use tabs.\n');
    const config = DroidConfigSchema.parse({ systemPrompt: 'Be brief.', rules: [join(dir, 'STYLE.md')], disableBuiltinSkills: true });
    const params = await composeSessionParams(config);
    const append = `Be brief.\n\nInstructions from STYLE.md (${join(dir, 'STYLE.md')}):\nUse tabs.`;
    expect(params.initialize).toEqual({ systemPrompt: { type: 'preset', preset: 'droid', append }, disableBuiltinSkills: true });
    expect(params.load).toEqual({ disableBuiltinSkills: true });
    expect(params.promptAppend).toBe(append);
    expect(params.notices).toEqual([]);
    // The params pass the initialize_session descriptor's schema.
    expect(InitializeSessionWithPrompt.params.safeParse({ machineId: 'm', cwd: '/w', ...params.initialize }).success).toBe(true);
    expect(InitializeSessionWithPrompt.method).toBe('droid.initialize_session');
  });

  it('sends no systemPrompt when there is nothing to append', async () => {
    const params = await composeSessionParams(DroidConfigSchema.parse({}));
    expect(params.initialize).toEqual({ disableBuiltinSkills: false });
    expect(params.promptAppend).toBeUndefined();
  });

  it('rejects a missing, non-file or oversized rules file with config_invalid naming its path', async () => {
    const dir = await tempDir();
    const big = join(dir, 'BIG.md');
    await writeFile(big, 'x'.repeat(MAX_RULES_FILE_BYTES + 1));
    const cases: Array<[string, string]> = [
      [join(dir, 'missing.md'), 'does not exist'],
      [dir, 'is not a file'],
      [big, `is larger than ${MAX_RULES_FILE_BYTES} bytes`],
    ];
    for (const [path, problem] of cases) {
      const error = await composeSessionParams(DroidConfigSchema.parse({ rules: [path] })).catch((e: unknown) => e);
      expect(isOneWorksError(error, 'config_invalid')).toBe(true);
      expect((error as Error).message).toBe(`rules file ${path} (adapters.droid.rules[0]) ${problem}`);
      expect((error as { data?: unknown }).data).toEqual({ path });
    }
  });

  it('warns once per plugin that it is skipped, with a fresh key at each start', async () => {
    const config = DroidConfigSchema.parse({ plugins: ['alpha', 'beta'] });
    expect(skippedPlugins(config)).toEqual(['alpha', 'beta']);
    const [first, second] = [await composeSessionParams(config), await composeSessionParams(config)];
    expect(first.notices).toMatchObject([
      { type: 'log', level: 'warn', message: 'plugin alpha skipped: no session-scoped injection' },
      { type: 'log', level: 'warn', message: 'plugin beta skipped: no session-scoped injection' },
    ]);
    expect(first.notices[0]?.key).not.toBe(second.notices[0]?.key);
  });
});

describe('resumedPromptNotice', () => {
  const params = async (systemPrompt?: string) => composeSessionParams(DroidConfigSchema.parse(systemPrompt ? { systemPrompt } : {}));

  it('says nothing when the loaded session kept the prompt the YAML composes', async () => {
    expect(
      resumedPromptNotice(await params('Be brief.'), {
        settings: { systemPrompt: { type: 'preset', preset: 'droid', append: 'Be brief.' } },
      }),
    ).toBeUndefined();
    expect(resumedPromptNotice(await params(), { settings: {} })).toBeUndefined();
    expect(resumedPromptNotice(await params(), {})).toBeUndefined();
  });

  it('warns when the YAML prompt differs from the one the session keeps', async () => {
    const changed = resumedPromptNotice(await params('Be verbose.'), {
      settings: { systemPrompt: { type: 'preset', preset: 'droid', append: 'Be brief.' } },
    });
    expect(changed).toMatchObject({ type: 'log', level: 'warn' });
    expect(changed?.type === 'log' ? changed.message : '').toContain('keeps the prompt of its creation');
    expect(resumedPromptNotice(await params('Be brief.'), { settings: {} })).toMatchObject({ type: 'log', level: 'warn' });
    expect(resumedPromptNotice(await params(), { settings: { systemPrompt: { append: 'Old.' } } })).toMatchObject({
      type: 'log',
      level: 'warn',
    });
  });
});
