import type { SessionImporter } from '../../../core/adapter.js';
import { defaultJournalRoot, isJournalFile, journalInProject } from './journal-paths.js';
import { parseDroidJournal } from './parse-journal.js';

/** Read-only import of droid's own session journals (`one-works import droid`). */
export const droidImporter: SessionImporter = {
  defaultRoot: defaultJournalRoot,
  isRecordFile: isJournalFile,
  inProject: journalInProject,
  parse: parseDroidJournal,
};

export { cwdSlug, journalHomePath } from './journal-paths.js';
export { parseDroidJournal } from './parse-journal.js';
