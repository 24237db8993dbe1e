export { writeFileAtomic } from './atomic-write.js';
export { interpolate, interpolateDocument, type InterpolationIssue, type InterpolationResult } from './interpolate.js';
export { configInvalid, formatIssue, formatPath, type ConfigIssue } from './issues.js';
export { CONFIG_SCHEMA_ID, configJsonSchema } from './json-schema.js';
export {
  findConfigFile,
  loadConfig,
  locateState,
  parseConfigText,
  type LocatedState,
  type LoadConfigOptions,
  type LoadedConfig,
} from './load.js';
export {
  LOCK_FILE_NAME,
  LockEntrySchema,
  LockFileSchema,
  lockEntries,
  lockPathFor,
  readLock,
  recordProbe,
  serializeLock,
  type LockEntry,
  type LockFile,
} from './lock.js';
export { CONFIG_FILE_NAME, defaultCacheDir, defaultStateDir, userConfigPath } from './paths.js';
export { renderEffectiveConfig, setYamlValue, setYamlValueInText, type YamlScalarValue } from './rewrite.js';
export {
  AbsolutePathSchema,
  ApprovedRootSchema,
  CacheSchema,
  OrchestratorSchema,
  SandboxSchema,
  StateSchema,
  WorkspacesSchema,
  approvedRootPath,
  DEFAULT_ADAPTER,
  createConfigSchema,
  type AdapterSchemas,
  type ConfigSchema,
  type ConfigShape,
  type OneWorksConfig,
  type ParsedConfig,
} from './schema.js';
export type { ConfigFieldMeta } from './schema-walk.js';
export {
  SECRET_MASK,
  applyEnvDefaults,
  collectSecrets,
  hasUrlUserinfo,
  maskSecrets,
  maskUrlUserinfo,
  type ConfigEnv,
} from './secrets.js';
export { closestKey } from './zod-issues.js';
