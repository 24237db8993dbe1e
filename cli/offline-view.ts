import { hostname } from 'node:os';
import { join } from 'node:path';
import { loggedOutcomes, recoveredRecord } from '../core/session/recover.js';
import { isOwnerAlive, OWNER_FILE, readOwner, type SessionRecord, type Store } from '../core/store/index.js';

/**
 * How reading commands show records while no orchestrator answers: a run left `running` by an
 * owner that is gone is not working any more. It is shown as the next start will record it
 * (recoveredRecord: its logged outcome, else unknown/owner_died), without writing anything.
 */

/** True when nobody owns the state directory: no owner file, or its owner on this host is gone. */
export async function ownerGone(stateDir: string): Promise<boolean> {
  let owner: Awaited<ReturnType<typeof readOwner>>;
  try {
    owner = await readOwner(join(stateDir, OWNER_FILE));
  } catch {
    // A malformed owner file: who owns the state cannot be told, so records are shown as written.
    return false;
  }
  if (!owner) return true;
  return owner.host === hostname() && !isOwnerAlive(owner);
}

/** The records as recovery will leave them when their owner is gone; as written otherwise. */
export async function asRecovered(stateDir: string, store: Pick<Store, 'readEvents'>, records: SessionRecord[]): Promise<SessionRecord[]> {
  if (!records.some(hasOpenRun) || !(await ownerGone(stateDir))) return records;
  const now = new Date();
  return Promise.all(
    records.map(async (record) =>
      hasOpenRun(record) ? (recoveredRecord(record, await loggedOutcomes(store, record), now) ?? record) : record,
    ),
  );
}

function hasOpenRun(record: SessionRecord): boolean {
  return record.runs.some((run) => run.status === 'running' || run.status === 'queued');
}
