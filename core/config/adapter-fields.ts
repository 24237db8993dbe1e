import { z } from 'zod';
import type { SecretPath } from './secret-paths.js';

/**
 * The fields of an adapter's YAML block that say what reaches its process's environment, shared
 * by every adapter (adapters/<cli>/config.ts): `env` (extra variables), `passEnv` (host variables
 * let through), `credentials` (secrets, each defaulting to the host variable of its name), and the
 * secret strings they are made of. Each is a function, so that a block built lazily
 * (core/lazy-schema.ts) builds its fields only when it is built. The `secret` and `env` metadata
 * are those core/config reads (schema-walk.ts `ConfigFieldMeta`). The `cli` block and an
 * endpoint's base URL are in core/adapter-config.ts.
 */

/** An environment variable name: what a shell accepts in an assignment. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// An environment variable name; anything else fails with "expected an environment variable name".
function envNameSchema(): z.ZodString {
  return z.string().regex(ENV_NAME, 'expected an environment variable name');
}

/** A non-empty secret string (masked in output, registered with the redactor), described by `description`. */
export function secretSchema(description: string): z.ZodString {
  return z.string().min(1).meta({ secret: true, description });
}

/** `env`: extra variables of the agent's process, name → value (not secrets); `{}` by default. */
export function envField(description: string): z.ZodDefault<z.ZodRecord<z.ZodString, z.ZodString>> {
  return z.record(envNameSchema(), z.string()).default({}).describe(description);
}

/**
 * Variables of an MCP server's process, name → value, the values secrets (`valueDescription`
 * describes each, when given). The caller makes it optional or gives it a default, and describes it.
 */
export function secretEnvSchema(valueDescription?: string): z.ZodRecord<z.ZodString, z.ZodString> {
  const value = z.string().meta(valueDescription === undefined ? { secret: true } : { secret: true, description: valueDescription });
  return z.record(envNameSchema(), value);
}

/** A list of environment variable names (`passEnv`, the host variables let through when set); `[]` by default. */
export function envNamesField(description: string): z.ZodDefault<z.ZodArray<z.ZodString>> {
  return z.array(envNameSchema()).default([]).describe(description);
}

/** The `credentials` object of a block: each key a secret, filled from the host variable of its name when unset. */
export type CredentialsField<Name extends string> = z.ZodPrefault<z.ZodObject<{ [K in Name]: z.ZodOptional<z.ZodString> }, z.core.$strict>>;

/**
 * `credentials`: the secrets passed to the agent's process, only those set. `secrets` maps each
 * variable name to what it is (e.g. `{ OPENAI_API_KEY: 'OpenAI API key' }`); each key is
 * optional, defaults to the host variable of its name (`env` metadata, filled by the loader) and
 * is described as `<what>; default: $<NAME>.`. The block is strict: another name is an error.
 */
export function credentialsField<const Name extends string>(description: string, secrets: Record<Name, string>): CredentialsField<Name> {
  const shape = Object.fromEntries(
    Object.entries<string>(secrets).map(([name, what]) => [
      name,
      secretSchema(`${what}; default: $${name}.`).meta({ env: name }).optional(),
    ]),
  ) as { [K in Name]: z.ZodOptional<z.ZodString> };
  // Every key is optional, so `{}` is an input for any `Name` (TypeScript cannot tell for a generic one).
  return z
    .strictObject(shape)
    .prefault({} as never)
    .describe(description);
}

/**
 * Where a `credentials` field made by {@link credentialsField} from `secrets` holds its secrets
 * (core/config/secret-paths.ts), each filled from the host variable of its name: for an adapter's
 * written-out secret paths, from the same map as the field itself.
 */
export function credentialSecretPaths(secrets: Record<string, string>): SecretPath[] {
  return Object.keys(secrets).map((name) => ({ path: ['credentials', name], env: name }));
}
