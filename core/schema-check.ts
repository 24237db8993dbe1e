import type { z } from 'zod';

/**
 * A quick, allocation-free check compiled from a zod schema, for hot paths that see the same
 * shapes again and again (every frame of a turn, every event written). It is conservative: it
 * answers `true` only for values the schema accepts as they are, so `true` means `safeParse`
 * would succeed; `false` means "not sure", and the caller runs the schema itself, which also
 * says what is wrong. Schemas stay the one definition: nothing here restates a shape.
 *
 * Understood: objects (stripping, and loose with an `unknown` catchall), strings (with length
 * checks), finite numbers (safe-integer format, bounds), booleans, literals, enums, null,
 * undefined, unknown/any, optional, nullable, arrays, unions (discriminated too) and records
 * with string keys, and lazy schemas as what they build. Anything else (transforms, pipes,
 * defaults, refinements, recursive schemas…) compiles to a check that always answers `false`, so
 * the schema decides.
 */
export type QuickCheck = (value: unknown) => boolean;

const NEVER_SURE: QuickCheck = () => false;
const ALWAYS: QuickCheck = () => true;

// The checks of the modules loaded so far that were not compiled yet (see warmQuickChecks).
const uncompiled = new Set<() => void>();

/** Compiles `schema` once, on the first call; keep the result and call it per value. */
export function compileQuickCheck(schema: z.ZodType): QuickCheck {
  // On first use: a module that defines a check builds neither it nor its (lazy) schema on load.
  let check: QuickCheck | undefined;
  const compileNow = (): void => {
    check ??= compile(schema);
    uncompiled.delete(compileNow);
  };
  uncompiled.add(compileNow);
  return (value) => {
    if (check === undefined) compileNow();
    return check!(value);
  };
}

/**
 * Compiles every check defined so far that no value has met yet: a long-lived process (the
 * orchestrator) does it in its idle time, so that its first turns do not. Yields between checks
 * (a client that arrives meanwhile is served between two); resolves once all are compiled.
 */
export async function warmQuickChecks(): Promise<void> {
  for (const compileNow of [...uncompiled]) {
    compileNow();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

// The internals read here are zod 4's public-but-internal `_zod.def` (type, shape, checks…).
interface Def {
  type: string;
  checks?: Array<{ _zod: { def: Record<string, unknown> } }>;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
}

// A lazy schema (core/lazy-schema.ts) is read as the schema it builds.
function defOf(schema: z.ZodType, seen: ReadonlySet<z.ZodType> = new Set()): Def {
  const internals = (schema as unknown as { _zod: { def: Def; innerType?: z.ZodType } })._zod;
  if (internals.def.type !== 'lazy') return internals.def;
  if (seen.has(schema)) return { type: 'recursive' };
  return defOf(internals.innerType!, new Set([...seen, schema]));
}

// The lazy schemas being compiled: one met again inside itself (a recursive schema) is left to the schema.
const compiling = new Set<z.ZodType>();

function compile(schema: z.ZodType): QuickCheck {
  const internals = (schema as unknown as { _zod: { def: Def; innerType?: z.ZodType } })._zod;
  if (internals.def.type === 'lazy') {
    if (compiling.has(schema)) return NEVER_SURE;
    compiling.add(schema);
    try {
      return compile(internals.innerType!);
    } finally {
      compiling.delete(schema);
    }
  }
  const def = internals.def;
  switch (def.type) {
    case 'unknown':
    case 'any':
      return def.checks?.length ? NEVER_SURE : ALWAYS;
    case 'string':
      return stringCheck(def);
    case 'number':
      return numberCheck(def);
    case 'boolean':
      return def.checks?.length ? NEVER_SURE : (v) => typeof v === 'boolean';
    case 'null':
      return (v) => v === null;
    case 'undefined':
      return (v) => v === undefined;
    case 'literal': {
      const values = def.values ?? [];
      return (v) => values.includes(v);
    }
    case 'enum': {
      const values = Object.values(def.entries ?? {});
      return (v) => values.includes(v);
    }
    case 'optional': {
      const inner = compile(def.innerType!);
      return (v) => v === undefined || inner(v);
    }
    case 'nullable': {
      const inner = compile(def.innerType!);
      return (v) => v === null || inner(v);
    }
    case 'array': {
      if (def.checks?.length) return NEVER_SURE;
      const element = compile(def.element!);
      return (v) => {
        if (!Array.isArray(v)) return false;
        // By index, as zod reads it (every() would skip holes).
        for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
        return true;
      };
    }
    case 'union': {
      if (def.checks?.length) return NEVER_SURE;
      const options = (def.options ?? []).map(compile);
      return (v) => options.some((option) => option(v));
    }
    case 'object':
      return objectCheck(def);
    case 'record':
      return recordCheck(def);
    default:
      return NEVER_SURE;
  }
}

function stringCheck(def: Def): QuickCheck {
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'min_length' && typeof c.minimum === 'number') min = Math.max(min, c.minimum);
    else if (c.check === 'max_length' && typeof c.maximum === 'number') max = Math.min(max, c.maximum);
    else return NEVER_SURE;
  }
  return (v) => typeof v === 'string' && v.length >= min && v.length <= max;
}

// zod 4 numbers are finite (no NaN, no Infinity); `int()` is the safe-integer format.
function numberCheck(def: Def): QuickCheck {
  let integer = false;
  const bounds: Array<(v: number) => boolean> = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    const value = c.value;
    if (c.check === 'number_format' && c.format === 'safeint') integer = true;
    else if (c.check === 'greater_than' && typeof value === 'number') bounds.push(c.inclusive ? (v) => v >= value : (v) => v > value);
    else if (c.check === 'less_than' && typeof value === 'number') bounds.push(c.inclusive ? (v) => v <= value : (v) => v < value);
    else return NEVER_SURE;
  }
  return (v) => {
    if (typeof v !== 'number' || !(integer ? Number.isSafeInteger(v) : Number.isFinite(v))) return false;
    // A plain loop: every() with a closure over `v` would allocate per call.
    for (const bound of bounds) if (!bound(v)) return false;
    return true;
  };
}

// An object: each shape key checked (an absent key passes only where the schema is `optional`;
// present means `in`, inherited too, as zod reads it).
// Extra keys pass when the object strips them or keeps them as `unknown`; other catchalls
// (strict objects among them) are left to the schema.
function objectCheck(def: Def): QuickCheck {
  if (def.checks?.length) return NEVER_SURE;
  if (def.catchall !== undefined && defOf(def.catchall).type !== 'unknown') return NEVER_SURE;
  const fields = Object.entries(def.shape ?? {}).map(([key, field]) => ({
    key,
    optional: defOf(field).type === 'optional',
    check: compile(field),
  }));
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    const record = v as Record<string, unknown>;
    for (const field of fields) {
      if (!(field.key in record)) {
        if (field.optional) continue;
        return false;
      }
      if (!field.check(record[field.key])) return false;
    }
    return true;
  };
}

// A record with string keys, over a plain object (zod also refuses class instances).
function recordCheck(def: Def): QuickCheck {
  if (def.checks?.length) return NEVER_SURE;
  const keyDef = defOf(def.keyType!);
  if (keyDef.type !== 'string' || keyDef.checks?.length) return NEVER_SURE;
  const value = compile(def.valueType!);
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const key of Reflect.ownKeys(v)) {
      if (typeof key !== 'string') return false;
      if (key === '__proto__') continue;
      if (!value((v as Record<string, unknown>)[key])) return false;
    }
    return true;
  };
}
