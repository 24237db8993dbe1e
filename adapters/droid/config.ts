import { basename, isAbsolute } from 'node:path';
import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { hasUrlUserinfo } from '../../core/config/secrets.js';
import { cliSelectionSchema } from '../../core/adapter.js';
import { credentialSecretPaths, credentialsField, envField, secretEnvSchema, secretSchema } from '../../core/config/adapter-fields.js';
import type { SecretPath } from '../../core/config/secret-paths.js';

/**
 * The `adapters.droid` block of one-works.yaml. Secret fields carry `.meta({ secret: true })`
 * and credentials `.meta({ env })`, which core/config reads to mask, redact and fill them.
 */

/** The droid CLI version One Works pins by default. */
export const DROID_DEFAULT_PIN = '0.225.2';

/** The reasoning efforts the `effort` key accepts. */
export const DROID_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/** The providers droid accepts in a BYOK `customModels` entry (droid 0.225.x settings schema). */
export const DROID_PROVIDERS = [
  'anthropic',
  'openai',
  'generic-chat-completion-api',
  'factory',
  'google',
  'xai',
  'voyage',
  'bedrock-converse',
] as const;

// A URL's userinfo is a credential, and these URLs are written into the session's files.
const noUserinfo =
  (file: string, instead: string) =>
  (value: string, ctx: z.RefinementCtx): void => {
    if (hasUrlUserinfo(value))
      ctx.addIssue({
        code: 'custom',
        message: `a user or password in the URL would be written in clear to the session's ${file}; remove it and ${instead}`,
      });
  };

const absolutePath = lazySchema(() =>
  z.string().superRefine((value, ctx) => {
    if (!isAbsolute(value)) ctx.addIssue({ code: 'custom', message: `expected an absolute path, got ${JSON.stringify(value)}` });
  }),
);

/** The block's `credentials`, variable name → what it is: each defaults to the host variable of its name (credentialsField). */
export const DROID_CREDENTIALS = { FACTORY_API_KEY: 'Factory API key', FACTORY_TOKEN: 'Factory token' };

/** Where this block holds secrets, as its schema marks them (core/config/secret-paths.ts): registered by the commands that leave the block unparsed. */
export const DROID_SECRET_PATHS: readonly SecretPath[] = [
  { path: ['customModels', '*', 'apiKey'] },
  { path: ['customModels', '*', 'extraHeaders', '*'] },
  ...credentialSecretPaths(DROID_CREDENTIALS),
  { path: ['mcpServers', '*', 'env', '*'] },
  { path: ['mcpServers', '*', 'headers', '*'] },
];

export const DroidCliSchema = lazySchema(() => cliSelectionSchema({ binary: 'droid', pin: DROID_DEFAULT_PIN }));

export const DroidCustomModelSchema = lazySchema(() =>
  z.strictObject({
    model: z.string().min(1).describe('The model name sent to the provider.'),
    displayName: z
      .string()
      .regex(/\S/, 'expected a name with a non-blank character')
      .optional()
      .describe('Name shown by droid; the id becomes custom:<displayName>-<n>.'),
    id: z.string().min(1).optional().describe('Explicit droid model id; overrides the custom:<name>-<n> rule.'),
    baseUrl: z
      .url()
      .superRefine(noUserinfo('.factory/settings.json', 'put the key in apiKey (or a header in extraHeaders): those never reach the disk'))
      .describe('Provider endpoint, e.g. http://127.0.0.1:8000/v1 (no user or password in it).'),
    apiKey: secretSchema('Provider API key (a secret).'),
    provider: z.enum(DROID_PROVIDERS).describe('Wire protocol of the endpoint.'),
    maxOutputTokens: z.number().int().positive().optional().describe('Output token cap per response.'),
    maxContextLimit: z.number().int().positive().optional().describe('Context window in tokens.'),
    extraHeaders: z
      .record(z.string(), secretSchema('Header value (a secret).'))
      .optional()
      .describe('Extra HTTP headers; values are secrets.'),
    reasoningEffort: z.enum(['off', 'low', 'medium', 'high']).optional().describe('Reasoning effort the model supports.'),
  }),
);

/** The hook events droid fires (droid 0.225.x); YAML `hooks` keys map 1:1 to them. */
export const DROID_HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
  'SessionEnd',
  'Notification',
  'SubagentStop',
  'PreCompact',
] as const;

const HookCommandSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('command').describe('The only hook kind: a shell command droid runs with the event as JSON on stdin.'),
    command: z.string().min(1).describe('The command line; an absolute script path is the robust choice.'),
    timeout: z.number().int().positive().optional().describe('Seconds before droid gives up on the command.'),
  }),
);

const HookMatcherSchema = lazySchema(() =>
  z.strictObject({
    matcher: z.string().min(1).optional().describe('Tool name (Execute, Read, …) the hooks apply to; default: every tool.'),
    hooks: z.array(HookCommandSchema).min(1).describe('Commands run when the event fires.'),
  }),
);

export const DroidHooksSchema = lazySchema(() =>
  z.strictObject(
    Object.fromEntries(
      DROID_HOOK_EVENTS.map((event) => [event, z.array(HookMatcherSchema).optional().describe(`Hooks of droid's ${event} event.`)]),
    ) as Record<(typeof DROID_HOOK_EVENTS)[number], z.ZodOptional<z.ZodArray<typeof HookMatcherSchema>>>,
  ),
);

/** An MCP server name: it prefixes the server's tools (`<name>___<tool>`), so keep it plain. */
const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** One MCP server; stdio servers need `command`, http/sse servers need `url`. */
export const DroidMcpServerSchema = lazySchema(() =>
  z
    .strictObject({
      type: z.enum(['stdio', 'http', 'sse']).describe('stdio: a local command; http / sse: a remote server at url.'),
      command: z.string().min(1).optional().describe('stdio: the executable (no "=" in it).'),
      args: z.array(z.string()).optional().describe('stdio: its arguments.'),
      env: secretEnvSchema('Value (a secret).').optional().describe('stdio: extra environment variables; the values are secrets.'),
      url: z
        .url()
        .superRefine(noUserinfo('.factory/mcp.json', 'send the credential in a headers value (a secret)'))
        .optional()
        .describe('http / sse: the server URL (no user or password in it).'),
      headers: z
        .record(z.string().min(1), secretSchema('Header value (a secret).'))
        .optional()
        .describe('http / sse: HTTP headers; the values are secrets.'),
    })
    .superRefine((server, ctx) => {
      const local = server.type === 'stdio';
      const need = (key: 'command' | 'url'): void => {
        if (server[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: `required when type is "${server.type}"` });
      };
      const forbid = (keys: Array<'command' | 'args' | 'env' | 'url' | 'headers'>): void => {
        for (const key of keys) {
          if (server[key] !== undefined)
            ctx.addIssue({ code: 'custom', path: [key], message: `not allowed when type is "${server.type}"` });
        }
      };
      if (local) {
        need('command');
        forbid(['url', 'headers']);
      } else {
        need('url');
        forbid(['command', 'args', 'env']);
      }
      // The command is started through `env NAME=VALUE <command>`, which would read a "=" as an assignment.
      if (server.command?.includes('='))
        ctx.addIssue({
          code: 'custom',
          path: ['command'],
          message: `expected a command without "=", got ${JSON.stringify(server.command)}`,
        });
    }),
);

export const DroidConfigSchema = lazySchema(() =>
  z.strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Use this adapter (default: true); a disabled adapter is never probed, installed or reported.'),
    cli: DroidCliSchema.prefault({}).describe('Which droid binary to run.'),
    model: z.string().min(1).default('inherit').describe('Default model of new sessions; "inherit" keeps droid\'s own default.'),
    effort: z.enum(DROID_EFFORTS).default('high').describe('Default reasoning effort of new sessions.'),
    autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
    customModels: z
      .array(DroidCustomModelSchema)
      .default([])
      .superRefine(rejectDuplicateIds)
      .describe('BYOK models written into the isolated settings.'),
    configContent: z
      .record(z.string(), z.unknown())
      .default({})
      .superRefine(rejectUserinfoUrls)
      .describe('Merged into the isolated .factory/settings.json (no URL with a user or password in it).'),
    env: envField('Extra environment variables for the droid process.'),
    credentials: credentialsField('Credentials passed to the droid process; nothing else from the environment is.', DROID_CREDENTIALS),
    startupTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline for the first handshake, in ms.'),
    requestTimeoutMs: z.number().int().positive().default(30_000).describe('Default deadline of a protocol request, in ms.'),
    drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
    interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after an interrupt before escalating, in ms.'),
    fallback: z
      .enum(['oneshot', 'none'])
      .default('oneshot')
      .describe(
        "When droid's stream-jsonrpc surface fails twice in a run (or its start fails outright): oneshot runs the rest of the run as `droid exec --output-format json`, with droid's read-only tools only; none fails the turn.",
      ),
    systemPrompt: z.string().min(1).optional().describe("Text appended to droid's own system prompt in new sessions."),
    rules: z.array(absolutePath).default([]).describe('Instruction files (absolute paths) appended to the system prompt of new sessions.'),
    skills: z
      .array(absolutePath)
      .default([])
      .superRefine(rejectDuplicateSkillNames)
      .describe('Skill directories (absolute paths, each with a SKILL.md) copied into the session home.'),
    disableBuiltinSkills: z.boolean().default(false).describe("Hide droid's built-in skills."),
    mcpServers: z
      .record(z.string().regex(MCP_SERVER_NAME, 'expected a server name of letters, digits, "_" and "-"'), DroidMcpServerSchema)
      .default({})
      .describe('MCP servers of every session; the only ones droid may start.'),
    hooks: DroidHooksSchema.prefault({}).describe("droid's native hooks, by event name."),
    plugins: z
      .array(z.string().min(1))
      .default([])
      .describe('droid plugins; skipped with a warning (droid has no session-scoped plugin injection).'),
  }),
);

export type DroidConfig = z.output<typeof DroidConfigSchema>;
export type DroidCustomModel = z.output<typeof DroidCustomModelSchema>;
export type DroidMcpServer = z.output<typeof DroidMcpServerSchema>;
export type DroidHooks = z.output<typeof DroidHooksSchema>;

type ModelNaming = Pick<DroidCustomModel, 'model' | 'displayName' | 'id'>;

/**
 * The id droid gives `models[index]` (droid 0.225.x): the explicit `id` if set, otherwise
 * `custom:<name>-<n>`, where name is `displayName` (or `model`) trimmed with whitespace runs
 * turned into `-`, and n counts the EARLIER entries with the same name (not the array index).
 * Throws RangeError when `index` is out of bounds.
 */
export function customModelId(models: readonly ModelNaming[], index: number): string {
  const entry = models[index];
  if (!entry) throw new RangeError(`no customModels entry at index ${index}`);
  if (entry.id !== undefined) return entry.id;
  const name = customModelName(entry);
  const earlier = models.slice(0, index).filter((m) => customModelName(m) === name).length;
  return `custom:${name}-${earlier}`;
}

function customModelName(entry: ModelNaming): string {
  return (entry.displayName ?? entry.model).trim().replace(/\s+/g, '-');
}

// configContent is written to settings.json as is: a URL with userinfo anywhere in it is refused.
function rejectUserinfoUrls(content: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const visit = (value: unknown, path: Array<string | number>): void => {
    if (typeof value === 'string') {
      if (hasUrlUserinfo(value))
        ctx.addIssue({
          code: 'custom',
          path,
          message:
            "a user or password in a URL would be written in clear to the session's .factory/settings.json; use customModels (apiKey) or a secret header instead",
        });
    } else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, [...path, index]);
    } else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) visit(item, [...path, key]);
  };
  visit(content, []);
}

// Two entries with one id would make droid pick either; reject the later one.
function rejectDuplicateIds(models: ModelNaming[], ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  models.forEach((_, index) => {
    const id = customModelId(models, index);
    const first = seen.get(id);
    if (first === undefined) seen.set(id, index);
    else ctx.addIssue({ code: 'custom', path: [index], message: `duplicate model id "${id}" (also customModels[${first}])` });
  });
}

// Each skill is copied to `.factory/skills/<directory name>/`: two directories of one name would collide.
function rejectDuplicateSkillNames(dirs: string[], ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  dirs.forEach((dir, index) => {
    const name = basename(dir);
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else
      ctx.addIssue({
        code: 'custom',
        path: [index],
        message: `duplicate skill name "${name}" (also skills[${first}]); skills are copied by directory name`,
      });
  });
}
