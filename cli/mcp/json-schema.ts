import { z } from 'zod';
import { ToolErrorOutSchema } from './schemas.js';

type JsonObjectSchema = { type: 'object'; [key: string]: unknown };

/**
 * The JSON Schema (draft-7, as the SDK's own McpServer emits) of a tool's input or its success
 * output. Inputs use the input view (a field with a default is optional); outputs the output
 * view (objects closed with additionalProperties: false unless declared loose).
 */
export function toolJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): JsonObjectSchema {
  return { ...(z.toJSONSchema(schema, { target: 'draft-7', io }) as Record<string, unknown>), type: 'object' };
}

/**
 * The output schema tools/list advertises: the success shape or the error shape
 * `{ error: { code, message, retryable, action } }`. Both are needed because SDK clients
 * (1.x) check structuredContent against the output schema even on `isError` results.
 */
export function advertisedOutputSchema(output: z.ZodObject): JsonObjectSchema {
  const { $schema, ...success } = toolJsonSchema(output, 'output');
  const { $schema: _same, ...failure } = toolJsonSchema(ToolErrorOutSchema, 'output');
  return { $schema, type: 'object', anyOf: [success, failure] };
}
