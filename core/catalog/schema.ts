import { z } from 'zod';

/**
 * The catalog vocabulary: what an adapter reports about the models and tools its CLI offers.
 * Pure schemas (like core/events), so adapters may import them; the cache and the loader in
 * this folder are runtime and adapters never import those.
 */

/** One model the CLI can run. */
export const CatalogModelSchema = z.strictObject({
  /** The id to pass as `model` (for BYOK entries the CLI's own derived id). */
  id: z.string().min(1),
  displayName: z.string(),
  provider: z.string().optional(),
  /** A user-configured (BYOK) model rather than one the CLI's vendor serves. */
  custom: z.boolean(),
  deprecated: z.boolean(),
  /** Listed but not usable now (no entitlement, no credentials…); see `disabledReason`. */
  disabled: z.boolean(),
  disabledReason: z.string().optional(),
  /** Reasoning efforts the model accepts; empty when the CLI does not say. */
  efforts: z.array(z.string()),
  defaultEffort: z.string().optional(),
});
export type CatalogModel = z.infer<typeof CatalogModelSchema>;

/** One tool the agent can call. */
export const CatalogToolSchema = z.strictObject({
  /** The name the agent calls the tool by (and that tool events and permission asks carry). */
  id: z.string().min(1),
  displayName: z.string(),
  /** The CLI's internal id when it differs from `id` (what its own tool filters take). */
  nativeId: z.string().optional(),
  /** read | edit | execute | other, as the CLI classifies it. */
  category: z.string().optional(),
  /** Whether the CLI lets the agent use the tool in a session with this configuration (e.g. at its autonomy level). */
  allowed: z.boolean().optional(),
});
export type CatalogTool = z.infer<typeof CatalogToolSchema>;

/** What one catalog listing returns. `tools` are the tools available with the requested (or default) model. */
export const CatalogSchema = z.strictObject({
  models: z.array(CatalogModelSchema),
  tools: z.array(CatalogToolSchema),
});
export type Catalog = z.infer<typeof CatalogSchema>;

/** What a catalog listing is for: the model whose tools are listed (default: the configured one). */
export interface CatalogRequest {
  modelId?: string | undefined;
}
