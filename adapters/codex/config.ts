import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { cliSelectionSchema, endpointUrlSchema } from '../../core/adapter.js';
import { credentialSecretPaths, credentialsField, envField, envNamesField, secretSchema } from '../../core/config/adapter-fields.js';
import type { SecretPath } from '../../core/config/secret-paths.js';

/**
 * The `adapters.codex` block of one-works.yaml: the common adapter shape (`enabled`, `cli`,
 * `model`, `effort`, `autonomy`, `env`, `passEnv`, `credentials`, timeouts, `endpoint`; core adds
 * `policy`) plus Codex's own command sandbox. Secret fields carry `.meta({ secret: true })`.
 */

/** The Codex CLI version One Works pins by default (qualified by test/conformance/codex-*.test.ts). */
export const CODEX_DEFAULT_PIN = '0.171.0';

/** The reasoning efforts Codex 0.171.0 lists for its models (`model/list` → supportedReasoningEfforts). */
export const CODEX_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/** Codex's own command sandbox (`thread/start` `sandbox`). */
export const CODEX_SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;

/** The block's `credentials`, variable name → what it is: each defaults to the host variable of its name (credentialsField). */
export const CODEX_CREDENTIALS = { OPENAI_API_KEY: 'OpenAI API key', CODEX_API_KEY: 'Codex API key' };

/** Where this block holds secrets, as its schema marks them (core/config/secret-paths.ts): registered by the commands that leave the block unparsed. */
export const CODEX_SECRET_PATHS: readonly SecretPath[] = [...credentialSecretPaths(CODEX_CREDENTIALS), { path: ['endpoint', 'apiKey'] }];

export const CodexCliSchema = lazySchema(() =>
  cliSelectionSchema({
    binary: 'codex',
    pin: CODEX_DEFAULT_PIN,
    pathDescription: 'Absolute path of the native codex binary',
  }),
);

export const CodexConfigSchema = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean().default(false).describe('Use this adapter; a disabled adapter is never probed, installed or reported.'),
    cli: CodexCliSchema.prefault({}).describe('Which codex binary to run.'),
    model: z.string().min(1).default('inherit').describe('Default model; "inherit" keeps the CLI default.'),
    effort: z.enum(CODEX_EFFORTS).optional().describe('Default reasoning effort.'),
    autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
    env: envField('Extra variables for the codex process.'),
    passEnv: envNamesField('Host variables let through when set (e.g. HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE).'),
    credentials: credentialsField('Credentials passed to codex, only those set; nothing else from the environment is.', CODEX_CREDENTIALS),
    endpoint: z
      .strictObject({
        baseUrl: endpointUrlSchema('OpenAI Responses API base URL, e.g. http://127.0.0.1:8000/v1 (Codex appends /responses).'),
        apiKey: secretSchema('Key for that endpoint (reaches codex through its environment only; a secret).'),
      })
      .optional()
      .describe('Bring your own endpoint: declared to Codex as a model provider with the Responses wire API.'),
    commandSandbox: z
      .enum(CODEX_SANDBOX_MODES)
      .default('workspace-write')
      .describe("Codex's own sandbox for the commands it runs (inside One Works' sandbox when that is bwrap)."),
    developerInstructions: z.string().min(1).optional().describe('Extra developer instructions for every thread.'),
    startupTimeoutMs: z.number().int().positive().default(60_000).describe('Deadline for initialize and thread/start, in ms.'),
    requestTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline of other app-server requests, in ms.'),
    drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
    interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after an interrupt before escalating, in ms.'),
  }),
);

export type CodexConfig = z.output<typeof CodexConfigSchema>;
