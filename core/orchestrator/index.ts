export { AdmissionLimitsSchema, TurnRequestSchema, createAdmission, isWriter } from './admission.js';
export type { Admission, AdmissionLimits, AdmissionSnapshot, AdmissionState, TurnRequest } from './admission.js';
export { RequestKeyRecordSchema, RequestKeyRegistry, RequestKeySchema, canonicalJson, hashRequestArgs } from './request-keys.js';
export type { RequestKeyEntry, RequestKeyPersistence, RequestKeyRecord } from './request-keys.js';
export { createOrchestrator, startOrchestrator } from './orchestrator.js';
export type { IntentStart, Orchestrator, OrchestratorStart } from './orchestrator.js';
export { INTENT_WINDOW_MS, matchesIntent } from './intent.js';
export type { IntentFacts, SessionIntent } from './intent.js';
export { OrchestratorLimitsSchema } from './orchestrator-deps.js';
export type { AdapterDefaults, ModelsForOptions, OrchestratorDeps, OrchestratorLimits } from './orchestrator-deps.js';
export { REQUEST_KEYS_FILE, requestKeyFile } from './request-key-file.js';
export { requestKeyTable } from './request-key-postgres.js';
export type * from './types.js';
export { EffectiveSettingsSchema, TurnHandleSchema } from './turn-handle-schema.js';
export {
  LABEL_PATTERN,
  MAX_LABELS,
  MAX_LABEL_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_TITLE_LENGTH,
  checkMetadata,
  checkPrompt,
} from './session-metadata.js';
export { DEFAULT_READ_EVENTS, MAX_READ_BYTES, MAX_READ_EVENTS } from './session-detail.js';
export type * from './worktree-types.js';
