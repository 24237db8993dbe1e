export { MAX_IMPORT_FILE_BYTES, collectImportSources } from './collect-sources.js';
export type { CollectOptions, ImportRefusal, ImportSource } from './collect-sources.js';
