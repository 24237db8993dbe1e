import type { PostgresStore } from '../store/index.js';
import type { RequestKeyEntry, RequestKeyPersistence } from './request-keys.js';

/**
 * Request-key persistence in the PostgreSQL store's `request_keys` table: one row per key,
 * replaced in one statement per claim, so a claim is durable (committed) before its handle is
 * returned, and every process on the database sees the same keys.
 */
export function requestKeyTable(store: PostgresStore): RequestKeyPersistence {
  return {
    load: async () =>
      Object.fromEntries(
        (await store.loadRequestKeys()).map((claim) => [
          claim.key,
          claim.kind === 'handle' ? { argsHash: claim.argsHash, handle: claim.value } : { argsHash: claim.argsHash, pending: claim.value },
        ]),
      ),
    save: (entry: RequestKeyEntry) =>
      store.saveRequestKey(
        entry.pending === undefined
          ? { key: entry.key, argsHash: entry.argsHash, kind: 'handle', value: entry.handle }
          : { key: entry.key, argsHash: entry.argsHash, kind: 'pending', value: entry.pending },
      ),
    remove: (key: string) => store.removeRequestKey(key),
  };
}
