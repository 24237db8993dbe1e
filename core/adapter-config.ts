import { isAbsolute } from 'node:path';
// semver's functions one by one, not its index: the index loads all of semver, and some of its
// modules (ranges/subset.js) parse versions as they load, at every command's start.
import parseVersion from 'semver/functions/parse.js';
import satisfies from 'semver/functions/satisfies.js';
import validVersion from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';
import { z } from 'zod';
import { hasUrlUserinfo } from './config/secrets.js';
import { OneWorksError } from './errors.js';

/**
 * The pieces of an adapter's YAML block that every adapter shares, part of the shared vocabulary
 * (re-exported by core/adapter.ts): the `cli` block (where the binary comes from, the pinned
 * version and the range a found binary must satisfy) and a model endpoint's base URL.
 */

/**
 * A model endpoint's base URL. A user or password in it would be a credential the redactor does
 * not know, written into the agent's files or environment and shown by `doctor`: refused, the
 * key belongs in the endpoint's `apiKey`.
 */
export function endpointUrlSchema(description: string) {
  return z
    .url()
    .refine((value) => !hasUrlUserinfo(value), {
      message: 'a user or password in the URL would reach the agent unredacted; remove it and put the key in apiKey',
    })
    .describe(description);
}

/**
 * The default pinned range of a pin: its minor line, `>=M.m.0 <M.(m+1).0`.
 * Throws OneWorksError('config_invalid') when `pin` is not an exact semver version.
 */
export function defaultCliRange(pin: string): string {
  const parsed = parseVersion(pin);
  if (!parsed) throw new OneWorksError('config_invalid', `not an exact semver version: ${JSON.stringify(pin)}`);
  return `>=${parsed.major}.${parsed.minor}.0 <${parsed.major}.${parsed.minor + 1}.0`;
}

export interface CliSelectionOptions {
  /** How messages name the binary, e.g. `droid`, `claude`. */
  binary: string;
  /** The version pinned by default (exact semver). */
  pin: string;
  /** The description of `cli.path`; default: the absolute path of the binary. */
  pathDescription?: string;
}

/** The zod schema of an adapter's `cli` block; its output always carries a `range`. */
export function cliSelectionSchema({ binary, pin, pathDescription }: CliSelectionOptions) {
  const pinSchema = z.string().superRefine((value, ctx) => {
    if (validVersion(value) === value) return;
    const hint = validRange(value) ? ' (a range belongs in cli.range)' : '';
    ctx.addIssue({ code: 'custom', message: `expected an exact semver version such as ${pin}, got ${JSON.stringify(value)}${hint}` });
  });
  const rangeSchema = z.string().superRefine((value, ctx) => {
    if (validRange(value) !== null) return;
    ctx.addIssue({
      code: 'custom',
      message: `expected a valid semver range such as "${defaultCliRange(pin)}", got ${JSON.stringify(value)}`,
    });
  });
  const absolutePath = z.string().superRefine((value, ctx) => {
    if (!isAbsolute(value)) ctx.addIssue({ code: 'custom', message: `expected an absolute path, got ${JSON.stringify(value)}` });
  });
  return z
    .strictObject({
      source: z
        .enum(['managed', 'system', 'path'])
        .default('managed')
        .describe(`managed: installed by One Works; system: ${binary} on PATH; path: the binary at cli.path.`),
      version: pinSchema.default(pin).describe('The pinned CLI version (exact semver).'),
      path: absolutePath.optional().describe(`${pathDescription ?? `Absolute path of the ${binary} binary`}; only with source: path.`),
      range: rangeSchema.optional().describe("Semver range the binary must satisfy; default: the pin's minor line."),
    })
    .superRefine((cli, ctx) => {
      if (cli.source === 'path' && cli.path === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['path'],
          message: `required when source is "path": the absolute path of the ${binary} binary`,
        });
      }
      if (cli.source !== 'path' && cli.path !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['path'],
          message: `only allowed when source is "path" (source is "${cli.source}"); set source: path or remove this key`,
        });
      }
      if (cli.source === 'managed' && cli.range !== undefined && validRange(cli.range) && !satisfies(cli.version, cli.range)) {
        ctx.addIssue({
          code: 'custom',
          path: ['range'],
          message: `expected a range that includes the pinned version ${cli.version}, got ${JSON.stringify(cli.range)}`,
        });
      }
    })
    .transform((cli) => ({ ...cli, range: cli.range ?? defaultCliRange(cli.version) }));
}
