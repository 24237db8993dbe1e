import type { z } from 'zod';
import { unwrapSchema } from './schema-walk.js';
import type { ConfigEnv } from './secrets.js';

/**
 * Where a schema holds secrets, as data: a key path (`*` for every entry of a record or element of
 * an array) to a field marked `.meta({ secret: true })`, with the environment variable that fills
 * it when unset (`.meta({ env })`). Paths are plain JSON: they can be worked out from the schema
 * once, ahead of time, and used where building the schema would cost more than the command that
 * needs them (see LoadConfigOptions.deferredBlocks).
 */
export interface SecretPath {
  path: readonly string[];
  env?: string;
}

// The parts of zod's internal definitions read here (zod 4 `_zod.def`), as schema-walk.ts reads them.
interface PathDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
}

/**
 * The secret paths of `schema`, in walk order: the fields `collectSecrets` (core/config/secrets.ts)
 * collects from a value of it, over the same structure (objects, records and arrays, through the
 * wrappers; not into unions, as it does not go there either). A schema met again inside itself
 * (a recursive lazy one) is not walked twice.
 */
export function secretPaths(schema: z.ZodType): SecretPath[] {
  const found: SecretPath[] = [];
  const walk = (node: z.ZodType, path: string[], open: Set<z.ZodType>): void => {
    const { schema: core, meta } = unwrapSchema(node);
    if (open.has(core)) return;
    if (meta.secret) found.push(meta.env === undefined ? { path } : { path, env: meta.env });
    const def = core._zod.def as unknown as PathDef;
    const inner = new Set(open).add(core);
    if (def.type === 'object') for (const [key, child] of Object.entries(def.shape ?? {})) walk(child, [...path, key], inner);
    else if (def.type === 'record' && def.valueType) walk(def.valueType, [...path, '*'], inner);
    else if (def.type === 'array' && def.element) walk(def.element, [...path, '*'], inner);
  };
  walk(schema, [], new Set());
  return found;
}

/**
 * The secrets at `paths` in `value` (a block as the file gives it, before its schema parsed it):
 * every non-empty string there, and for a path with `env` that holds nothing, that variable's value
 * in `env` when set. It may find more than `collectSecrets` over the parsed value would (a path
 * with `env` under an object the file leaves out and the schema would not make), never less:
 * registering a host credential that is not used hides nothing.
 */
export function secretsAtPaths(paths: readonly SecretPath[], value: unknown, env: ConfigEnv): string[] {
  const found = new Set<string>();
  for (const { path, env: name } of paths) {
    const leaves = valuesAt(value, path);
    for (const leaf of leaves) if (typeof leaf === 'string' && leaf.length > 0) found.add(leaf);
    if (name !== undefined && !path.includes('*') && leaves[0] === undefined) {
      const fromEnv = env[name];
      if (fromEnv !== undefined && fromEnv !== '') found.add(fromEnv);
    }
  }
  return [...found];
}

// The values at `path` in `value` (`*`: each entry of a mapping or element of a sequence); a path
// without `*` gives one value, undefined when it leads nowhere.
function valuesAt(value: unknown, path: readonly string[]): unknown[] {
  let current: unknown[] = [value];
  for (const key of path) {
    const next: unknown[] = [];
    for (const node of current) {
      if (key === '*') {
        if (Array.isArray(node)) next.push(...node);
        else if (node !== null && typeof node === 'object') next.push(...Object.values(node));
      } else {
        next.push(
          node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, key)
            ? (node as Record<string, unknown>)[key]
            : undefined,
        );
      }
    }
    current = next;
  }
  return current;
}
