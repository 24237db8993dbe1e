import { describe, expect, it } from 'vitest';
import { ClaudeConfigSchema, claudeCodeAdapter } from '../../../adapters/claude-code/index.js';
import { CLAUDE_ASK_TOOLS, describeClaudeLaunch } from '../../../adapters/claude-code/launch.js';
import { claudeAnswer } from '../../../adapters/claude-code/session.js';
import { CanUseToolSchema } from '../../../adapters/claude-code/wire.js';
import type { ResolvedCli } from '../../../core/adapter.js';

const cli: ResolvedCli = { source: 'path', binaryPath: '/opt/claude', version: '2.1.333', range: '2.1.x', expected: undefined };
const launch = (config: unknown) =>
  describeClaudeLaunch(ClaudeConfigSchema.parse(config), cli, {
    cwd: '/ws',
    home: '/home/s',
    session: { mode: 'new', id: 'abc' },
    model: undefined,
    effort: undefined,
    hostEnv: {},
  });

describe('describeClaudeLaunch', () => {
  it('tells claude to ask about every command, write and fetch (ask rules in --settings)', () => {
    const { args } = launch({});
    const settings = JSON.parse(args[args.indexOf('--settings') + 1]!) as { permissions: { ask: string[] } };
    expect(settings.permissions.ask).toEqual([...CLAUDE_ASK_TOOLS]);
    expect(settings.permissions.ask).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit', 'WebFetch']));
    expect(args).toEqual(expect.arrayContaining(['--permission-mode', 'default', '--permission-prompt-tool', 'stdio']));
  });
});

describe('claude-code diagnose', () => {
  it('warns that an allowedTools entry for an asked tool has no effect, and not for others', () => {
    const notes = claudeCodeAdapter.diagnose!(ClaudeConfigSchema.parse({ allowedTools: ['Bash(npm test:*)', 'mcp__docs'] }));
    const warned = notes.filter((n) => n.name === 'claude-code allowedTools');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ warn: true, config: true });
    expect(warned[0]!.detail).toContain("'Bash(npm test:*)' has no effect");
  });
});

describe('claudeAnswer', () => {
  const ask = CanUseToolSchema.parse({
    subtype: 'can_use_tool',
    tool_name: 'mcp__docs__search',
    input: { q: 'x' },
    permission_suggestions: [
      { type: 'addRules', rules: [{ toolName: 'mcp__docs__search' }], behavior: 'allow', destination: 'localSettings' },
      { type: 'addDirectories', directories: ['/ws'], destination: 'session' },
      { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
    ],
  });

  it('allow-session hands Claude no rule: One Works keeps the approval, so its policy decides every later call', () => {
    expect(claudeAnswer('allow-session', ask, 'no')).toEqual({ behavior: 'allow', updatedInput: { q: 'x' } });
  });

  it('allow-once allows with the input unchanged; deny carries the message', () => {
    expect(claudeAnswer('allow-once', ask, 'no')).toEqual({ behavior: 'allow', updatedInput: { q: 'x' } });
    expect(claudeAnswer('deny', ask, 'not allowed')).toEqual({ behavior: 'deny', message: 'not allowed' });
  });
});
