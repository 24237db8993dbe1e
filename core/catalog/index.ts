export {
  catalogCacheKey,
  loadCatalog,
  loadTurnCatalog,
  readCatalogEntry,
  TURN_CATALOG_STALE_MS,
  type LoadCatalogOptions,
  type TurnCatalog,
} from './load-catalog.js';
export {
  CatalogModelSchema,
  CatalogSchema,
  CatalogToolSchema,
  type Catalog,
  type CatalogModel,
  type CatalogRequest,
  type CatalogTool,
} from './schema.js';
export { DEFAULT_CATALOG_TTL_MS, createTtlCache, type CachedValue, type TtlCache, type TtlCacheOptions } from './ttl-cache.js';
export { INHERIT_MODEL, validateModelAndEffort, type ModelAndEffortCheck } from './validate.js';
