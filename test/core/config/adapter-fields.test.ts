import { describe, expect, it } from 'vitest';
import { AcpConfigSchema, GeminiConfigSchema } from '../../../adapters/acp/config.js';
import { ClaudeConfigSchema } from '../../../adapters/claude-code/config.js';
import { CodexConfigSchema } from '../../../adapters/codex/config.js';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { ProcessConfigSchema } from '../../../adapters/process-runner/config.js';
import { applyEnvDefaults, collectSecrets, createConfigSchema, maskSecrets, parseConfigText } from '../../../core/config/index.js';

// The env / passEnv / credentials fields every adapter block has (core/config/adapter-fields.ts),
// as a user meets them in one-works.yaml: the messages of bad values, and credentials that are
// secrets filled from the host variable of their name.

const schema = createConfigSchema({
  droid: DroidConfigSchema,
  'claude-code': ClaudeConfigSchema,
  codex: CodexConfigSchema,
  gemini: GeminiConfigSchema,
  acp: AcpConfigSchema,
  process: ProcessConfigSchema,
});

const lines = (...parts: string[]): string => `${parts.join('\n')}\n`;

// The message of the config_invalid error for `text`, or a failure when it parses.
function messageOf(text: string): string {
  try {
    parseConfigText(text, { schema, env: {}, file: 'one-works.yaml' });
  } catch (error) {
    expect(error).toMatchObject({ code: 'config_invalid' });
    return (error as Error).message;
  }
  throw new Error('expected the config to be rejected');
}

const mcpServer = (block: string): string[] => [
  'adapters:',
  `  ${block}:`,
  '    mcpServers:',
  '      s:',
  '        type: stdio',
  '        command: x',
  '        env: { "1x": y }',
];

// What a bad value is refused with: the case, the YAML and the message, which pins the messages
// of every block's env, passEnv and credentials.
const REFUSED: Array<[string, string[], string]> = [
  [
    'an env name that is not one',
    ['adapters:', '  claude-code:', '    env: { "1BAD": x }'],
    'one-works.yaml:3:12: adapters.claude-code.env["1BAD"]: invalid key "1BAD": expected an environment variable name',
  ],
  [
    "droid's env name that is not one",
    ['adapters:', '  droid:', '    env: { "A-B": x }'],
    'one-works.yaml:3:12: adapters.droid.env.A-B: invalid key "A-B": expected an environment variable name',
  ],
  [
    'a passEnv name that is not one',
    ['adapters:', '  codex:', '    passEnv: [HTTPS_PROXY, "NO-PROXY"]'],
    'one-works.yaml:3:28: adapters.codex.passEnv[1]: expected an environment variable name, got "NO-PROXY"',
  ],
  [
    "gemini's passEnv name that is not one",
    ['adapters:', '  gemini:', '    passEnv: ["9X"]'],
    'one-works.yaml:3:15: adapters.gemini.passEnv[0]: expected an environment variable name, got "9X"',
  ],
  [
    "an ACP agent's credentials name that is not one",
    ['adapters:', '  acp:', '    agents:', '      a:', '        command: x', '        credentials: ["A B"]'],
    'one-works.yaml:6:23: adapters.acp.agents.a.credentials[0]: expected an environment variable name, got "A B"',
  ],
  [
    "a harness's env name that is not one",
    ['adapters:', '  process:', '    harnesses:', '      h:', '        command: x', '        env: { "a=b": x }'],
    'one-works.yaml:6:16: adapters.process.harnesses.h.env["a=b"]: invalid key "a=b": expected an environment variable name',
  ],
  [
    "a droid MCP server's env name that is not one",
    mcpServer('droid'),
    'one-works.yaml:7:16: adapters.droid.mcpServers.s.env["1x"]: invalid key "1x": expected an environment variable name',
  ],
  [
    // Claude Code's MCP server keeps zod's own message (it names the pattern).
    "a Claude Code MCP server's env name that is not one",
    mcpServer('claude-code'),
    'one-works.yaml:7:16: adapters.claude-code.mcpServers.s.env["1x"]: invalid key "1x": Invalid string: must match pattern /^[A-Za-z_][A-Za-z0-9_]*$/',
  ],
  [
    'a credential the block does not know, listing those it does',
    ['adapters:', '  gemini:', '    credentials: { GEMINI_KEY: x }'],
    'one-works.yaml:3:20: adapters.gemini.credentials.GEMINI_KEY: unknown key; expected one of GEMINI_API_KEY, GOOGLE_API_KEY',
  ],
  [
    "another adapter's credential",
    ['adapters:', '  claude-code:', '    credentials: { OPENAI_API_KEY: x }'],
    'one-works.yaml:3:20: adapters.claude-code.credentials.OPENAI_API_KEY: unknown key; expected one of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN',
  ],
  [
    'an empty credential, without showing it',
    ['adapters:', '  droid:', '    credentials: { FACTORY_API_KEY: "" }'],
    'one-works.yaml:3:37: adapters.droid.credentials.FACTORY_API_KEY: expected a non-empty string, got ***',
  ],
];

describe('the env, passEnv and credentials fields of adapter blocks', () => {
  for (const [name, yaml, message] of REFUSED) {
    it(`refuse ${name}`, () => {
      expect(messageOf(lines(...yaml))).toBe(message);
    });
  }

  it('fill each credential from the host variable of its name, as a secret that output masks', () => {
    const env = {
      FACTORY_TOKEN: 'ft-secret-1',
      ANTHROPIC_AUTH_TOKEN: 'at-secret-2',
      CODEX_API_KEY: 'cx-secret-3',
      GOOGLE_API_KEY: 'gg-secret-4',
      HOME: '/home/someone',
    };
    const text = lines('adapters:', '  codex:', '    credentials: { OPENAI_API_KEY: oa-secret-5 }', '  gemini: {}', '  claude-code: {}');
    const config = applyEnvDefaults(schema, parseConfigText(text, { schema, env, file: 'one-works.yaml' }), env);
    expect(config.adapters.droid.credentials).toEqual({ FACTORY_TOKEN: 'ft-secret-1' });
    expect(config.adapters['claude-code'].credentials).toEqual({ ANTHROPIC_AUTH_TOKEN: 'at-secret-2' });
    expect(config.adapters.codex.credentials).toEqual({ OPENAI_API_KEY: 'oa-secret-5', CODEX_API_KEY: 'cx-secret-3' });
    expect(config.adapters.gemini.credentials).toEqual({ GOOGLE_API_KEY: 'gg-secret-4' });
    expect(collectSecrets(schema, config).sort()).toEqual(['at-secret-2', 'cx-secret-3', 'ft-secret-1', 'gg-secret-4', 'oa-secret-5']);
    const masked = JSON.stringify(maskSecrets(schema, config));
    for (const secret of ['ft-secret-1', 'at-secret-2', 'cx-secret-3', 'gg-secret-4', 'oa-secret-5']) expect(masked).not.toContain(secret);
  });

  it('default env and passEnv to empty, and let names through as given', () => {
    const text = lines('adapters:', '  codex:', '    env: { RUST_LOG: info }', '    passEnv: [HTTPS_PROXY]');
    const config = parseConfigText(text, { schema, env: {}, file: 'one-works.yaml' });
    expect(config.adapters.codex.env).toEqual({ RUST_LOG: 'info' });
    expect(config.adapters.codex.passEnv).toEqual(['HTTPS_PROXY']);
    expect(config.adapters['claude-code'].env).toEqual({});
    expect(config.adapters['claude-code'].passEnv).toEqual([]);
  });
});
