import { z } from 'zod';

/**
 * Schema metadata that core/config understands, attached with zod's `.meta()` so that adapters
 * can mark their own fields without importing core/config:
 * - `secret: true`: the value is a secret (masked in output, registered with the redactor);
 * - `env: 'NAME'`: when the key is unset, the loader fills it from the environment variable NAME.
 */
export interface ConfigFieldMeta {
  secret?: boolean;
  env?: string;
  description?: string;
}

// The parts of zod's internal definitions the walkers read (zod 4 `_zod.def`).
interface WalkDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

function defOf(schema: z.ZodType): WalkDef {
  return schema._zod.def as unknown as WalkDef;
}

/**
 * Strips wrappers (optional, default, prefault, nullable, readonly, catch, the input side of a
 * pipe, lazy) and returns the core schema with the metadata of every layer merged (outer wins).
 */
export function unwrapSchema(schema: z.ZodType): { schema: z.ZodType; meta: ConfigFieldMeta } {
  let meta: ConfigFieldMeta = {};
  let current = schema;
  for (;;) {
    meta = { ...(z.globalRegistry.get(current) as ConfigFieldMeta | undefined), ...meta };
    const def = defOf(current);
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    // The schema the lazy one built (built once, on first use): its getter would build another.
    else if (def.type === 'lazy' && def.getter) current = (current._zod as unknown as { innerType: z.ZodType }).innerType;
    else return { schema: current, meta };
  }
}

/** The schema of `key` inside an object, record or array schema; undefined when there is none. */
export function childSchema(schema: z.ZodType, key: PropertyKey): z.ZodType | undefined {
  const def = defOf(unwrapSchema(schema).schema);
  if (def.type === 'object' && typeof key === 'string') return def.shape?.[key];
  if (def.type === 'record') return def.valueType;
  if (def.type === 'array' && typeof key === 'number') return def.element;
  return undefined;
}

/** The schema at a key path (zod issue path), or undefined when the path leaves the schema. */
export function schemaAt(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = root;
  for (const key of path) {
    if (!current) return undefined;
    current = childSchema(current, key);
  }
  return current;
}

/** The declared keys of an object schema (after unwrapping), or undefined for anything else. */
export function objectKeys(schema: z.ZodType): string[] | undefined {
  const def = defOf(unwrapSchema(schema).schema);
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : undefined;
}

/**
 * Rebuilds `value` alongside its schema, calling `leaf` on every node with that node's merged
 * metadata; a node `leaf` replaces is not descended into. Object schemas are walked over their
 * declared keys as well as the value's, so `leaf` also sees keys that are unset. Returns a copy;
 * `value` is not modified.
 */
export function mapWithSchema(schema: z.ZodType, value: unknown, leaf: (value: unknown, meta: ConfigFieldMeta) => unknown): unknown {
  const { schema: core, meta } = unwrapSchema(schema);
  const replaced = leaf(value, meta);
  if (replaced !== value) return replaced;
  if (value === null || typeof value !== 'object') return value;
  const def = defOf(core);
  if (Array.isArray(value)) {
    const element = def.element;
    return def.type === 'array' && element ? value.map((v) => mapWithSchema(element, v, leaf)) : value;
  }
  if (def.type !== 'object' && def.type !== 'record') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = { ...source };
  const keys = new Set([...Object.keys(def.type === 'object' ? (def.shape ?? {}) : {}), ...Object.keys(source)]);
  for (const key of keys) {
    const child = def.type === 'object' ? def.shape?.[key] : def.valueType;
    if (!child) continue;
    const mapped = mapWithSchema(child, source[key], leaf);
    if (mapped !== undefined || key in source) out[key] = mapped;
  }
  return out;
}
