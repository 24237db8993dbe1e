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
  return z.lazy(build);
}
