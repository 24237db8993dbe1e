import { z } from 'zod';

/** The `$id` of the exported schema. */
export const CONFIG_SCHEMA_ID = 'urn:one-works:schema:one-works.yaml';

/**
 * The JSON Schema (draft 2020-12) of one-works.yaml, for editors. Built from the input side of
 * `schema` (`io: 'input'`), so keys with defaults are optional. Secret fields are marked
 * `writeOnly`. Refinements (absolute paths, semver, cross-key rules) are not expressible and are
 * checked only by the loader.
 */
export function configJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const body = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      const annotated = jsonSchema as Record<string, unknown>;
      if (annotated.secret === true) annotated.writeOnly = true;
      delete annotated.secret;
      delete annotated.env;
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = body;
  return {
    $schema: $schema ?? 'https://json-schema.org/draft/2020-12/schema',
    $id: CONFIG_SCHEMA_ID,
    title: 'one-works.yaml',
    description: 'Configuration of One Works: state, workspaces, limits, sandbox and adapters.',
    ...rest,
  };
}
