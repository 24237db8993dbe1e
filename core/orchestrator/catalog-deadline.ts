import type { CatalogModel } from '../catalog/index.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { ModelsForOptions } from './orchestrator-deps.js';

/** How long acceptance waits for an adapter's catalog listing by default. */
export const CATALOG_DEADLINE_MS = 60_000;

type ModelsFor = (adapter: string, options?: ModelsForOptions) => Promise<CatalogModel[] | undefined>;

/**
 * `modelsFor` bounded by `deadlineMs`: a listing that takes longer rejects with OneWorksError
 * `catalog_unavailable` (retryable; the turn is not accepted). The listing itself goes on in the
 * host, whose cache a retry may then hit. Other results and errors pass through unchanged.
 */
export function boundedModelsFor(modelsFor: ModelsFor, deadlineMs: number): ModelsFor {
  return (adapter, options) => {
    // A stale catalog's listing (ModelsForOptions.stale) has the same deadline when it is run.
    const stale = options?.stale;
    const bounded = stale
      ? { ...options, stale: (refresh: () => Promise<CatalogModel[] | undefined>) => stale(() => within(adapter, deadlineMs, refresh())) }
      : options;
    return within(adapter, deadlineMs, modelsFor(adapter, bounded));
  };
}

// `listing`, or catalog_unavailable once `deadlineMs` passed.
function within<T>(adapter: string, deadlineMs: number, listing: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new OneWorksError(
            ERROR_CODES.CATALOG_UNAVAILABLE,
            `the model catalog of ${adapter} did not answer within ${deadlineMs >= 1000 ? `${Math.round(deadlineMs / 1000)} s` : `${deadlineMs} ms`}; nothing was accepted, retry shortly`,
            {
              data: { adapter, deadlineMs },
            },
          ),
        ),
      deadlineMs,
    );
  });
  return Promise.race([listing, expired]).finally(() => clearTimeout(timer));
}
