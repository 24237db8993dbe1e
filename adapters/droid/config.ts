import { isAbsolute } from 'node:path';
import semver from 'semver';
import { z } from 'zod';
import { OneWorksError } from '../../core/errors.js';

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
  'anthropic', 'openai', 'generic-chat-completion-api', 'factory', 'google', 'xai', 'voyage', 'bedrock-converse',
] as const;

/**
 * The default pinned range of a pin: its minor line, `>=M.m.0 <M.(m+1).0`.
 * Throws OneWorksError('config_invalid') when `pin` is not an exact semver version.
 */
export function defaultRange(pin: string): string {
  const parsed = semver.parse(pin);
  if (!parsed) throw new OneWorksError('config_invalid', `not an exact semver version: ${JSON.stringify(pin)}`);
  return `>=${parsed.major}.${parsed.minor}.0 <${parsed.major}.${parsed.minor + 1}.0`;
}

const secret = (description: string) => z.string().min(1).meta({ secret: true, description });

const absolutePath = z.string().superRefine((value, ctx) => {
  if (!isAbsolute(value)) ctx.addIssue({ code: 'custom', message: `expected an absolute path, got ${JSON.stringify(value)}` });
});

const PinSchema = z.string().superRefine((value, ctx) => {
  if (semver.valid(value) === value) return;
  const hint = semver.validRange(value) ? ' (a range belongs in cli.range)' : '';
  ctx.addIssue({ code: 'custom', message: `expected an exact semver version such as ${DROID_DEFAULT_PIN}, got ${JSON.stringify(value)}${hint}` });
});

const RangeSchema = z.string().superRefine((value, ctx) => {
  if (semver.validRange(value) === null) {
    ctx.addIssue({ code: 'custom', message: `expected a valid semver range such as ">=0.225.0 <0.226.0", got ${JSON.stringify(value)}` });
  }
});

export const DroidCliSchema = z
  .strictObject({
    source: z.enum(['managed', 'system', 'path']).default('managed')
      .describe('managed: installed by One Works; system: droid on PATH; path: the binary at cli.path.'),
    version: PinSchema.default(DROID_DEFAULT_PIN).describe('The pinned CLI version (exact semver).'),
    path: absolutePath.optional().describe('Absolute path of the droid binary; only with source: path.'),
    range: RangeSchema.optional().describe("Semver range the binary must satisfy; default: the pin's minor line."),
  })
  .superRefine((cli, ctx) => {
    if (cli.source === 'path' && cli.path === undefined) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'required when source is "path": the absolute path of the droid binary' });
    }
    if (cli.source !== 'path' && cli.path !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: `only allowed when source is "path" (source is "${cli.source}"); set source: path or remove this key` });
    }
    if (cli.source === 'managed' && cli.range !== undefined && semver.validRange(cli.range) && !semver.satisfies(cli.version, cli.range)) {
      ctx.addIssue({ code: 'custom', path: ['range'], message: `expected a range that includes the pinned version ${cli.version}, got ${JSON.stringify(cli.range)}` });
    }
  })
  .transform((cli) => ({ ...cli, range: cli.range ?? defaultRange(cli.version) }));

export const DroidCustomModelSchema = z.strictObject({
  model: z.string().min(1).describe('The model name sent to the provider.'),
  displayName: z.string().regex(/\S/, 'expected a name with a non-blank character').optional()
    .describe('Name shown by droid; the id becomes custom:<displayName>-<n>.'),
  id: z.string().min(1).optional().describe('Explicit droid model id; overrides the custom:<name>-<n> rule.'),
  baseUrl: z.url().describe('Provider endpoint, e.g. http://127.0.0.1:8000/v1.'),
  apiKey: secret('Provider API key (a secret).'),
  provider: z.enum(DROID_PROVIDERS).describe('Wire protocol of the endpoint.'),
  maxOutputTokens: z.number().int().positive().optional().describe('Output token cap per response.'),
  maxContextLimit: z.number().int().positive().optional().describe('Context window in tokens.'),
  extraHeaders: z.record(z.string(), secret('Header value (a secret).')).optional().describe('Extra HTTP headers; values are secrets.'),
  reasoningEffort: z.enum(['off', 'low', 'medium', 'high']).optional().describe('Reasoning effort the model supports.'),
});

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const DroidConfigSchema = z.strictObject({
  cli: DroidCliSchema.prefault({}).describe('Which droid binary to run.'),
  model: z.string().min(1).default('inherit').describe('Default model of new sessions; "inherit" keeps droid\'s own default.'),
  effort: z.enum(DROID_EFFORTS).default('high').describe('Default reasoning effort of new sessions.'),
  autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
  customModels: z.array(DroidCustomModelSchema).default([]).superRefine(rejectDuplicateIds)
    .describe('BYOK models written into the isolated settings.'),
  configContent: z.record(z.string(), z.unknown()).default({}).describe('Merged into the isolated .factory/settings.json.'),
  env: z.record(z.string().regex(ENV_NAME, 'expected an environment variable name'), z.string()).default({})
    .describe('Extra environment variables for the droid process.'),
  credentials: z
    .strictObject({
      FACTORY_API_KEY: secret('Factory API key; default: $FACTORY_API_KEY.').meta({ env: 'FACTORY_API_KEY' }).optional(),
      FACTORY_TOKEN: secret('Factory token; default: $FACTORY_TOKEN.').meta({ env: 'FACTORY_TOKEN' }).optional(),
    })
    .prefault({})
    .describe('Credentials passed to the droid process; nothing else from the environment is.'),
  startupTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline for the first handshake, in ms.'),
  requestTimeoutMs: z.number().int().positive().default(30_000).describe('Default deadline of a protocol request, in ms.'),
  drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
  interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after an interrupt before escalating, in ms.'),
});

export type DroidConfig = z.output<typeof DroidConfigSchema>;
export type DroidCustomModel = z.output<typeof DroidCustomModelSchema>;

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
