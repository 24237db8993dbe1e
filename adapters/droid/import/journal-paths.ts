import { isAbsolute, join, sep } from 'node:path';

/**
 * Where droid keeps a session journal below its `.factory` directory:
 * `sessions/<cwd-slug>/<sessionId>.jsonl`, the slug being the absolute cwd with every `/`
 * replaced by `-` (observed with droid 0.225.2; spaces, dots and non-ASCII are kept).
 */

/** The cwd slug droid names a project's session folder by. */
export function cwdSlug(cwd: string): string {
  return cwd.split(sep).join('-');
}

/** The journal's path relative to a session HOME, for droid's `load_session` to find it. */
export function journalHomePath(cwd: string, nativeSessionId: string): string {
  return join('.factory', 'sessions', cwdSlug(cwd), `${nativeSessionId}.jsonl`);
}

/** True for `<slug>/<id>.jsonl` directly below the sessions root (nothing else is read). */
export function isJournalFile(relativePath: string): boolean {
  const parts = relativePath.split(sep);
  return parts.length === 2 && parts[1]!.endsWith('.jsonl') && parts[1] !== '.jsonl';
}

/** True when a journal (relative to the sessions root) lies in one of the projects' folders. */
export function journalInProject(relativePath: string, projects: readonly string[]): boolean {
  const folder = relativePath.split(sep)[0];
  return projects.some((project) => isAbsolute(project) && cwdSlug(project) === folder);
}

/** droid's sessions root below a user's HOME. */
export function defaultJournalRoot(home: string): string {
  return join(home, '.factory', 'sessions');
}
