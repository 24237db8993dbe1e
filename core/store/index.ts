export { createFileStore, FileStore } from './file-store.js';
export type { FileStoreOptions } from './file-store.js';
export type {
  Store,
  OwnerClaim,
  EventIndex,
  AppendOptions,
  FollowOptions,
  ReadEventsOptions,
  CorruptSession,
  SessionScan,
} from './store.js';
export { isOwnerAlive, ownerRecordOfThisProcess, processIdentity } from './owner-identity.js';
export type { ProcessIdentity } from './owner-identity.js';
export { readOwner } from './owner-lock.js';
export {
  SessionRecordSchema,
  RunRecordSchema,
  OwnerRecordSchema,
  SessionStatusSchema,
  RunStatusSchema,
  AutonomySchema,
  WorktreeRecordSchema,
} from './records.js';
export type { SessionRecord, RunRecord, OwnerRecord, SessionStatus, RunStatus, WorktreeRecord } from './records.js';
export { OWNER_FILE, SESSION_ID_PATTERN, assertSessionId, sessionDir } from './state-layout.js';
export { writeFileAtomic, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-fs.js';
export { directorySize, formatBytes } from './dir-size.js';
// The PostgreSQL store is imported from './postgres-store.js' by who uses it: it loads the pg
// driver, which the file backend (and every command's start) does without.
export type { PostgresStore, PostgresStoreOptions, StoredRequestKey } from './postgres-store.js';
export { POSTGRES_SCHEMA_VERSION, readSchemaVersion } from './postgres-schema.js';
export { postgresUrlSecrets, postgresWhere } from './postgres-url.js';
export { compareIds, compareTimes } from './order.js';
