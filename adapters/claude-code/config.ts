import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { cliSelectionSchema, endpointUrlSchema } from '../../core/adapter.js';
import {
  credentialSecretPaths,
  credentialsField,
  ENV_NAME,
  envField,
  envNamesField,
  secretSchema,
} from '../../core/config/adapter-fields.js';
import type { SecretPath } from '../../core/config/secret-paths.js';

/**
 * The `adapters.claude-code` block of one-works.yaml: the common adapter shape (`enabled`, `cli`,
 * `model`, `effort`, `autonomy`, `env`, `passEnv`, `credentials`, timeouts, `endpoint`; core adds
 * `policy`) plus Claude Code's session parameters. Secret fields carry `.meta({ secret: true })`.
 */

/** The Claude Code CLI version One Works pins by default (qualified by test/conformance/claude-*.test.ts). */
export const CLAUDE_DEFAULT_PIN = '2.1.333';

/** The efforts `claude --effort` accepts (2.1.333). */
export const CLAUDE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/** The model aliases the CLI resolves itself (`claude --help`, 2.1.333). */
export const CLAUDE_MODEL_ALIASES = ['sonnet', 'opus', 'haiku', 'fable'] as const;

/** The block's `credentials`, variable name → what it is: each defaults to the host variable of its name (credentialsField). */
export const CLAUDE_CREDENTIALS = {
  ANTHROPIC_API_KEY: 'Anthropic API key',
  ANTHROPIC_AUTH_TOKEN: 'Bearer token',
  CLAUDE_CODE_OAUTH_TOKEN: 'OAuth token',
};

/** Where this block holds secrets, as its schema marks them (core/config/secret-paths.ts): registered by the commands that leave the block unparsed. */
export const CLAUDE_SECRET_PATHS: readonly SecretPath[] = [
  ...credentialSecretPaths(CLAUDE_CREDENTIALS),
  { path: ['endpoint', 'apiKey'] },
  { path: ['mcpServers', '*', 'env', '*'] },
  { path: ['mcpServers', '*', 'headers', '*'] },
];

export const ClaudeCliSchema = lazySchema(() => cliSelectionSchema({ binary: 'claude', pin: CLAUDE_DEFAULT_PIN }));

/** An MCP server given to Claude Code with --mcp-config (and --strict-mcp-config: the only ones it starts). */
export const ClaudeMcpServerSchema = lazySchema(() =>
  z.strictObject({
    type: z.enum(['stdio', 'http', 'sse']).describe('stdio: a local command; http / sse: a remote server at url.'),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    // A bad name fails with zod's own message, which names the pattern.
    env: z.record(z.string().regex(ENV_NAME), z.string().meta({ secret: true })).optional(),
    url: z.url().optional(),
    headers: z.record(z.string().min(1), secretSchema('Header value (a secret).')).optional(),
  }),
);

export const ClaudeConfigSchema = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean().default(false).describe('Use this adapter; a disabled adapter is never probed, installed or reported.'),
    cli: ClaudeCliSchema.prefault({}).describe('Which claude binary to run.'),
    model: z.string().min(1).default('inherit').describe('Default model (a name or alias); "inherit" keeps the CLI default.'),
    effort: z.enum(CLAUDE_EFFORTS).optional().describe('Default effort (claude --effort).'),
    autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
    env: envField('Extra variables for the claude process.'),
    passEnv: envNamesField('Host variables let through when set (e.g. HTTPS_PROXY, NO_PROXY, NODE_EXTRA_CA_CERTS).'),
    credentials: credentialsField(
      'Credentials passed to claude, only those set; nothing else from the environment is.',
      CLAUDE_CREDENTIALS,
    ),
    endpoint: z
      .strictObject({
        baseUrl: endpointUrlSchema('Anthropic Messages API base URL (ANTHROPIC_BASE_URL).'),
        apiKey: secretSchema('Key for that endpoint (sent as ANTHROPIC_API_KEY; a secret).'),
      })
      .optional()
      .describe('Bring your own endpoint.'),
    systemPrompt: z.string().min(1).optional().describe("Appended to Claude Code's system prompt (--append-system-prompt)."),
    allowedTools: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'Tools the CLI may run without asking (--allowedTools); bypasses the policy for them. Not for Bash, Edit, Write, MultiEdit, NotebookEdit, WebFetch, WebSearch: the policy decides every call of those (use policy.allow).',
      ),
    disallowedTools: z.array(z.string().min(1)).default([]).describe('Tools removed from the model (--disallowedTools).'),
    mcpServers: z
      .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/), ClaudeMcpServerSchema)
      .default({})
      .describe('The only MCP servers claude may start.'),
    startupTimeoutMs: z.number().int().positive().default(60_000).describe('Deadline for the initialize handshake, in ms.'),
    requestTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline of a control request, in ms.'),
    drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
    interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after an interrupt before escalating, in ms.'),
  }),
);

export type ClaudeConfig = z.output<typeof ClaudeConfigSchema>;
