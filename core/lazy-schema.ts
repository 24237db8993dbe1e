import { z } from 'zod';

/**
 * A schema built on first use: `lazySchema(() => z.object({ … }))` is a zod schema (it parses,
 * embeds in other schemas and infers its type like the schema `build` returns) whose definition
 * runs the first time it parses, or is embedded in a schema that parses. Building zod schemas is
 * a large part of a short command's start (zod 4 makes an object per schema, per `.optional()`,
 * per `.describe()`), and most commands use few of the schemas their modules define: module
 * level schemas are wrapped in this so that loading a module builds none of them.
 *
 * It is zod's own `z.lazy` (its `_zod.def.type` is `lazy`): code that walks schema definitions
 * (core/schema-check.ts) looks through it to the built schema. The schema is built once.
 */
export function lazySchema<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  const schema = z.lazy(build);
  unbuilt.add(schema);
  return schema;
}

// The lazy schemas of the modules loaded so far that have not parsed yet (see warmLazySchemas).
const unbuilt = new Set<z.ZodLazy>();

/**
 * Builds every lazy schema defined so far, and runs each once on an empty object (zod sets up a
 * schema's parse on its first run): a long-lived process (the orchestrator) does it in its
 * idle time, so that its first turns do not (some 40 ms of a fresh orchestrator's CPU while the
 * first agent starts). Yields between schemas (a client that arrives meanwhile is served between
 * two); resolves once all are built.
 */
export async function warmLazySchemas(): Promise<void> {
  for (const schema of [...unbuilt]) {
    unbuilt.delete(schema);
    schema.safeParse(WARM_VALUE);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

// An empty object: an object schema checks each of its keys against it (and so sets up its
// properties' schemas), and hardly any schema accepts it; nothing is kept of the result.
const WARM_VALUE = Object.freeze({});
