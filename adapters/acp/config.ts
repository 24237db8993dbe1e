import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { cliSelectionSchema, endpointUrlSchema } from '../../core/adapter.js';
import {
  credentialSecretPaths,
  credentialsField,
  envField,
  envNamesField,
  secretEnvSchema,
  secretSchema,
} from '../../core/config/adapter-fields.js';
import type { SecretPath } from '../../core/config/secret-paths.js';

// The YAML blocks of the ACP adapters, apart from their code so that loading the configuration
// does not load the ACP SDK (cli/context.ts imports this module alone).

/** A server name: what the agent calls the server (and prefixes its tools with). */
export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * One MCP server given to an ACP agent in `session/new` / `session/load` (`mcpServers`): stdio
 * (command, args, env) or remote (http / sse: url, headers). Env and header values are secrets.
 */
/** The gemini block's `credentials`, variable name → what it is: each defaults to the host variable of its name (credentialsField). */
export const GEMINI_CREDENTIALS = { GEMINI_API_KEY: 'Gemini API key', GOOGLE_API_KEY: 'Google API key' };

/** Where this block holds secrets, as its schema marks them (core/config/secret-paths.ts): registered by the commands that leave the block unparsed. */
export const GEMINI_SECRET_PATHS: readonly SecretPath[] = [...credentialSecretPaths(GEMINI_CREDENTIALS), { path: ['endpoint', 'apiKey'] }];

/** Where this block holds secrets, as its schema marks them (core/config/secret-paths.ts): registered by the commands that leave the block unparsed. */
export const ACP_SECRET_PATHS: readonly SecretPath[] = [
  { path: ['agents', '*', 'mcpServers', '*', 'env', '*'] },
  { path: ['agents', '*', 'mcpServers', '*', 'headers', '*'] },
];

export const AcpMcpServerSchema = lazySchema(() =>
  z
    .strictObject({
      type: z.enum(['stdio', 'http', 'sse']).default('stdio').describe('stdio: a local command; http / sse: a remote server at url.'),
      command: z.string().min(1).optional().describe('stdio: the executable (an absolute path, or a name the agent looks up).'),
      args: z.array(z.string()).default([]).describe('stdio: its arguments.'),
      env: secretEnvSchema().default({}).describe('stdio: its environment variables; the values are secrets.'),
      url: z.url().optional().describe('http / sse: the server URL.'),
      headers: z
        .record(z.string().min(1), z.string().meta({ secret: true }))
        .default({})
        .describe('http / sse: HTTP headers; the values are secrets.'),
    })
    .superRefine((server, ctx) => {
      const need = server.type === 'stdio' ? 'command' : 'url';
      if (server[need] === undefined) ctx.addIssue({ code: 'custom', path: [need], message: `required when type is "${server.type}"` });
    }),
);
export type AcpMcpServer = z.output<typeof AcpMcpServerSchema>;

const mcpServers = (who: string) =>
  z
    .record(z.string().regex(MCP_SERVER_NAME, 'expected a server name of letters, digits, "_" and "-"'), AcpMcpServerSchema)
    .default({})
    .describe(`MCP servers given to ${who} in session/new and session/load; the only ones One Works gives it.`);

/** One ACP agent declared by command: `adapters.acp.agents.<name>`. */
export const AcpAgentSchema = lazySchema(() =>
  z.strictObject({
    command: z.string().min(1).describe('The executable: an absolute path, or a name looked up on PATH.'),
    args: z.array(z.string()).default([]).describe('Its arguments (e.g. [acp]).'),
    env: envField('Extra environment variables (not secrets; use credentials for keys).'),
    credentials: envNamesField('Host variables passed to the agent when set; their values are secrets (redacted everywhere).'),
    authMethod: z.string().min(1).optional().describe('An ACP authenticate method id to call when the agent advertises it.'),
    mcpServers: mcpServers('the agent'),
  }),
);
export type AcpAgent = z.output<typeof AcpAgentSchema>;

/** The `adapters.acp` block: ACP agents by command, run as `--adapter acp:<name>`. */
export const AcpConfigSchema = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean().default(false).describe('Use the ACP agents declared here (as acp:<name>).'),
    agents: z
      .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'expected a name of letters, digits, "_" and "-"'), AcpAgentSchema)
      .default({})
      .describe('ACP agents by name; run one with --adapter acp:<name>.'),
    model: z.string().min(1).default('inherit').describe('Default model, set through the agent\'s "model" config option when offered.'),
    effort: z.string().min(1).optional().describe('Default effort, set through a "thought_level" config option when offered.'),
    autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
    startupTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe('Deadline for initialize and session/new or session/load, in ms.'),
    requestTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline of other requests, in ms.'),
    drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
    interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after session/cancel before escalating, in ms.'),
  }),
);
export type AcpConfig = z.output<typeof AcpConfigSchema>;

/** `acp:<name>` → `<name>`; undefined for any other adapter name. */
export function acpAgentName(adapter: string): string | undefined {
  const match = /^acp:(.+)$/.exec(adapter);
  return match?.[1];
}

/** The Gemini CLI version One Works pins by default (qualified by test/conformance/gemini.test.ts). */
export const GEMINI_DEFAULT_PIN = '0.61.0';
export const GEMINI_PACKAGE = '@google/gemini-cli';
/** The bundle inside the package. */
export const GEMINI_BUNDLE = 'bundle/gemini.js';
/** The auth method for an API key (and a BYOK endpoint), called with ACP `authenticate`. */
export const GEMINI_API_KEY_AUTH = 'gemini-api-key';

export const GeminiConfigSchema = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean().default(false).describe('Use this adapter; a disabled adapter is never probed, installed or reported.'),
    cli: cliSelectionSchema({
      binary: 'gemini',
      pin: GEMINI_DEFAULT_PIN,
      pathDescription: 'Absolute path of gemini.js (or a gemini executable)',
    })
      .prefault({})
      .describe('Which Gemini CLI to run.'),
    model: z.string().min(1).default('inherit').describe('Default model (gemini -m); "inherit" keeps the CLI default.'),
    autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
    env: envField('Extra variables for the gemini process.'),
    passEnv: envNamesField('Host variables let through when set (e.g. HTTPS_PROXY, NO_PROXY, NODE_EXTRA_CA_CERTS).'),
    credentials: credentialsField(
      'Credentials passed to gemini, only those set; nothing else from the environment is.',
      GEMINI_CREDENTIALS,
    ),
    endpoint: z
      .strictObject({
        baseUrl: endpointUrlSchema('Gemini API base URL without /v1beta (GOOGLE_GEMINI_BASE_URL).'),
        apiKey: secretSchema('Key for that endpoint (sent as GEMINI_API_KEY; a secret).'),
      })
      .optional()
      .describe('Bring your own endpoint.'),
    startupTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(90_000)
      .describe('Deadline for initialize and session/new or session/load, in ms.'),
    requestTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline of other requests, in ms.'),
    drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
    interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after session/cancel before escalating, in ms.'),
  }),
);
export type GeminiConfig = z.output<typeof GeminiConfigSchema>;

/**
 * The `adapters.droid-acp` block of one-works.yaml: only `enabled` (and `policy`, which core
 * adds). Everything else (CLI, model, customModels, env, credentials, MCP servers) is the
 * `adapters.droid` block's, so the two droid transports run the same droid the same way and can
 * be compared side by side; cli/context.ts hands the adapter that block (see DERIVED_BLOCKS).
 */
export const DroidAcpBlockSchema = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean().default(false).describe('Use droid in ACP mode; it reads the adapters.droid block for everything else.'),
  }),
);
