import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { writeFileAtomic } from '../store/index.js';
import type { RequestKeyEntry, RequestKeyPersistence } from './request-keys.js';

/** The file, under the state directory, that keeps claimed request keys. */
export const REQUEST_KEYS_FILE = 'request-keys.json';

/**
 * Request-key persistence in one JSON object (key → { argsHash, handle | pending }), replaced atomically
 * (temp file, fsync, rename) on every claim, so a claim is durable before its handle is returned.
 * Saves are serialised. A file that is not a JSON object is `state_corrupt` and never rewritten.
 */
export function requestKeyFile(stateDir: string): RequestKeyPersistence {
  const file = path.join(stateDir, REQUEST_KEYS_FILE);
  let claims: Record<string, unknown> | undefined;
  let saves: Promise<void> = Promise.resolve();

  const load = async (): Promise<Record<string, unknown>> => {
    if (claims) return claims;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        claims = {};
        return claims;
      }
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw corrupt(file, error);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw corrupt(file);
    claims = parsed as Record<string, unknown>;
    return claims;
  };

  // Every change rewrites the whole file, one at a time.
  const change = (edit: (current: Record<string, unknown>) => Record<string, unknown>): Promise<void> => {
    const write = saves.then(async () => {
      const next = edit({ ...(await load()) });
      await writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`);
      claims = next;
    });
    saves = write.catch(() => undefined);
    return write;
  };

  const save = (entry: RequestKeyEntry): Promise<void> =>
    change((current) => ({
      ...current,
      [entry.key]:
        entry.pending === undefined
          ? { argsHash: entry.argsHash, handle: entry.handle }
          : { argsHash: entry.argsHash, pending: entry.pending },
    }));

  const remove = (key: string): Promise<void> =>
    change((current) => {
      delete current[key];
      return current;
    });

  return { load, save, remove };
}

function corrupt(file: string, cause?: unknown): OneWorksError {
  return new OneWorksError(
    ERROR_CODES.STATE_CORRUPT,
    `${file} is not a JSON object of request keys; One Works will not rewrite it (move it aside to start afresh)`,
    {
      data: { file },
      cause,
    },
  );
}
