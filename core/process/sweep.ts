import { readdirSync, readFileSync } from 'node:fs';

/**
 * Finds and kills the processes that carry a marker in their environment, e.g.
 * `HOME=<session home>`. Needed because agents may start processes outside their own process
 * group: droid 0.225.2 runs each Execute command under a supervisor in a session of its own, so
 * a command a tool put in the background (`cmd &`, `setsid`) survives a group kill. The session
 * HOME is unique per session and inherited by everything the agent starts, so it identifies
 * them. Linux only (reads /proc); elsewhere nothing is found. Processes we may not inspect are
 * skipped.
 */
export function findProcessesByEnv(name: string, value: string): number[] {
  if (process.platform !== 'linux') return [];
  const needle = Buffer.from(`${name}=${value}\0`);
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue;
    }
    // Match at the start of the block or right after a NUL, never inside another variable.
    const at = environ.indexOf(needle);
    if (at === 0 || (at > 0 && environ.indexOf(Buffer.concat([Buffer.from([0]), needle])) >= 0)) pids.push(pid);
  }
  return pids;
}

/**
 * SIGKILLs every process carrying the marker, repeating (bounded) so that processes forked
 * meanwhile are caught too. Returns how many distinct processes were signalled.
 */
export function sweepProcessesByEnvSync(name: string, value: string, maxRounds = 10): number {
  const killed = new Set<number>();
  for (let round = 0; round < maxRounds; round++) {
    // A process signalled in an earlier round may still be dying: only new ones count as found.
    const pids = findProcessesByEnv(name, value).filter((pid) => !killed.has(pid));
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // Already gone, or not ours to kill.
      }
    }
  }
  return killed.size;
}

const tracked = new Set<string>();

/** Remembers a marker whose processes must die with One Works (see `sweepTrackedSync`). */
export function trackSweep(name: string, value: string): () => void {
  const key = `${name}=${value}`;
  tracked.add(key);
  return () => tracked.delete(key);
}

/** Sweeps every tracked marker, synchronously; for exit paths. Never throws. */
export function sweepTrackedSync(): void {
  for (const key of tracked) {
    const eq = key.indexOf('=');
    try {
      sweepProcessesByEnvSync(key.slice(0, eq), key.slice(eq + 1));
    } catch {
      // Exiting: nothing more can be done.
    }
  }
  tracked.clear();
}
