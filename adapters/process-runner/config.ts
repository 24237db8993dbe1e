import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { envField, secretEnvSchema } from '../../core/config/adapter-fields.js';
import type { SecretPath } from '../../core/config/secret-paths.js';

/**
 * The `adapters.process` block of one-works.yaml: harnesses by name, each a command that speaks
 * RunnerFrame (wire.ts). A harness runs as `run --adapter process:<name>`; its block is that
 * adapter's config (core adds `policy` to it).
 */

const HARNESS_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The built-in tool sets a harness may name under `tools`. */
export const TOOL_SETS = ['workspace'] as const;

/** The tool kinds a harness may give an MCP server's tools: how the permission policy treats each call. */
export const MCP_TOOL_KINDS = ['read', 'search', 'fetch', 'other'] as const;

/** An MCP server One Works starts (inside the session sandbox) and calls for the runner: stdio only. */
/** Where this block holds secrets, as its schema marks them (core/config/secret-paths.ts): registered by the commands that leave the block unparsed. */
export const PROCESS_SECRET_PATHS: readonly SecretPath[] = [
  { path: ['harnesses', '*', 'provider', 'apiKey'] },
  { path: ['harnesses', '*', 'mcpServers', '*', 'env', '*'] },
];

export const HarnessMcpServerSchema = lazySchema(() =>
  z.strictObject({
    command: z.string().min(1).describe('The server: an absolute path, or a name found on PATH.'),
    args: z.array(z.string()).default([]).describe('Its arguments.'),
    env: secretEnvSchema('Value (a secret).')
      .default({})
      .describe('Extra environment variables of the server; the values are secrets (registered with the redactor).'),
    kind: z
      .enum(MCP_TOOL_KINDS)
      .default('other')
      .describe(
        "How the policy decides its tools' calls: read / search are allowed (read-only), fetch at autonomy high, other asks a person (declined without one).",
      ),
    startupTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline for its initialize and tools/list, in ms.'),
    callTimeoutMs: z.number().int().positive().default(120_000).describe('Longest a call of one of its tools may take, in ms.'),
  }),
);
export type HarnessMcpServer = z.output<typeof HarnessMcpServerSchema>;

const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]*$/;

export const HarnessSchema = lazySchema(() =>
  z.strictObject({
    command: z.string().min(1).describe('The runner: an absolute path, or a name found on PATH.'),
    args: z.array(z.string()).default([]).describe('Arguments of the command.'),
    model: z.string().min(1).optional().describe('The model the runner is told to use (open.params.config.model).'),
    provider: z
      .strictObject({
        baseUrl: z.string().min(1).optional().describe('The model endpoint the runner calls.'),
        apiKey: z
          .string()
          .min(1)
          .meta({ secret: true })
          .optional()
          .describe('Its key (a secret): reaches the runner only in the open frame.'),
      })
      .default({})
      .describe('Credentials, given to the runner in its open frame only (never through its environment).'),
    tools: z.array(z.enum(TOOL_SETS)).default(['workspace']).describe('Built-in tool sets One Works executes for the runner.'),
    env: envField('Extra variables for the runner (never credentials: those go in provider).'),
    mcpServers: z
      .record(z.string().regex(MCP_SERVER_NAME, 'expected a server name of letters, digits and "-"'), HarnessMcpServerSchema)
      .default({})
      .describe('MCP servers One Works starts and calls for the runner: their tools reach it as `<server>__<tool>`.'),
    autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
    openTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline for the answer to the first open, in ms.'),
    requestTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline of the other requests (not prompt), in ms.'),
    commandTimeoutMs: z.number().int().positive().default(120_000).describe('Longest a run_command tool call may take, in ms.'),
    interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after an interrupt before escalating, in ms.'),
    drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
  }),
);
export type HarnessConfig = z.output<typeof HarnessSchema>;

export const ProcessConfigSchema = lazySchema(() =>
  z.strictObject({
    enabled: z.boolean().default(true).describe('Use the harnesses below (each runs as `--adapter process:<name>`).'),
    harnesses: z
      .record(z.string().regex(HARNESS_NAME, 'expected a harness name (letters, digits, - and _)'), HarnessSchema)
      .default({})
      .describe('Process runners by name.'),
  }),
);
export type ProcessConfig = z.output<typeof ProcessConfigSchema>;

/** `process:<name>` → `<name>`; undefined for any other adapter name. */
export function harnessName(adapterName: string): string | undefined {
  return adapterName.startsWith('process:') ? adapterName.slice('process:'.length) : undefined;
}
