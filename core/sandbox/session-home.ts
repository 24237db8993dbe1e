import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { SeedFile } from '../adapter.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { SESSION_XDG_DIRS } from '../process/env.js';
import { ensurePrivateDirSync, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, writeFileAtomicSync } from '../store/private-fs.js';
import { HOME_DIR, sessionDir } from '../store/state-layout.js';

/**
 * Prepares the isolated HOME of a session: `<state>/sessions/<id>/home`, mode 0700, with the
 * four XDG roots (`.config`, `.cache`, `.local/share`, `.local/state`) inside, and the adapter's
 * seed files written (mode from the SeedFile, default 0600; missing parent directories 0700).
 *
 * Stable across calls and processes: existing content stays, seed files are rewritten
 * (atomically, so a symlink planted at a seed path is replaced, never followed), and HOME is
 * set back to 0700. Never touches the real HOME. Resolves with the absolute HOME path.
 *
 * Throws OneWorksError `internal` for a seed path that is absolute or escapes HOME (an adapter
 * bug), `state_corrupt` when a directory on the way inside HOME is a symlink or not a directory,
 * and `usage` for an invalid session id.
 */
export async function prepareSessionHome(stateDir: string, sessionId: string, seed: readonly SeedFile[]): Promise<string> {
  return prepareSessionHomeSync(stateDir, sessionId, seed);
}

/** {@link prepareSessionHome}, throwing instead of rejecting (a launch ahead, core/session/launch-ahead.ts, checks it before its spawn). */
export function prepareSessionHomeSync(stateDir: string, sessionId: string, seed: readonly SeedFile[]): string {
  const home = sessionHome(stateDir, sessionId);
  // Synchronous: these are some 25 small metadata calls on the path to every agent's spawn, where
  // each thread-pool round trip cost more than the call (6 ms against 0.5 ms for a new session's
  // HOME, measured); the orchestrator's event loop waits for them that long.
  ensurePrivateDirSync(home);
  // Every seed path is checked before any is written; a path seeded twice gets its last content.
  const files = new Map(seed.map((file) => [seedPath(file.path), file]));
  chmodSync(home, PRIVATE_DIR_MODE);
  for (const relative of Object.values(SESSION_XDG_DIRS)) ensureDirInside(home, relative);
  for (const [relative, file] of files) {
    ensureDirInside(home, path.dirname(relative));
    // Not fsynced: seed files are composed and written again before every launch (a crash
    // loses nothing the next start does not rewrite).
    writeFileAtomicSync(path.join(home, relative), file.content, file.mode ?? PRIVATE_FILE_MODE);
  }
  return home;
}

/** The path of a session's isolated HOME (what {@link prepareSessionHome} prepares and returns). */
export function sessionHome(stateDir: string, sessionId: string): string {
  return path.join(sessionDir(path.resolve(stateDir), sessionId), HOME_DIR);
}

// Normalises a seed path and refuses one that is absolute, empty or leaves HOME.
function seedPath(raw: string): string {
  const relative = path.normalize(raw);
  if (path.isAbsolute(raw) || relative === '.' || relative === '..' || relative.startsWith(`..${path.sep}`)) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `seed file path ${JSON.stringify(raw)} is not a file path inside the session home`, {
      data: { path: raw },
    });
  }
  return relative;
}

// Creates each directory from HOME down to `relative` (0700), refusing symlinks on the way:
// the agent can write its HOME, and a planted link must not redirect our writes outside it.
function ensureDirInside(home: string, relative: string): void {
  let current = home;
  for (const part of relative.split(path.sep)) {
    if (part === '' || part === '.') continue;
    current = path.join(current, part);
    try {
      mkdirSync(current, { mode: PRIVATE_DIR_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const info = lstatSync(current);
    if (info.isSymbolicLink() || !info.isDirectory()) {
      throw new OneWorksError(
        ERROR_CODES.STATE_CORRUPT,
        `${current} in the session home is ${info.isSymbolicLink() ? 'a symlink' : 'not a directory'}; One Works refuses to write through it`,
        { data: { path: current } },
      );
    }
  }
}
