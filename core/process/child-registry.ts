/**
 * The live children of this One Works process, so that they die with it (cf. execa
 * `terminate/cleanup.js`, which does not cover detached children: ours all are, to lead their
 * own process group). spawnChild adds a child once it has spawned and removes it once it has
 * settled.
 */

import { sweepTrackedSync } from './sweep.js';

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Signals the process group led by `pid` (POSIX) or the process itself (Windows). Returns false when nothing was there (ESRCH). */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** Records a live child's process group. */
export function registerChild(pid: number): void {
  liveGroups.add(pid);
}

/** Forgets a child once it has settled. */
export function unregisterChild(pid: number): void {
  liveGroups.delete(pid);
}

/** How many children are registered as live (for diagnostics and tests). */
export function liveChildCount(): number {
  return liveGroups.size;
}

/**
 * Sends SIGKILL to the process group of every live child, synchronously. Safe to call from a
 * `process.on('exit')` handler or from the cli's SIGINT/SIGTERM handlers; never throws.
 */
export function killAllChildrenSync(): void {
  for (const pid of liveGroups) {
    try {
      signalGroup(pid, 'SIGKILL');
    } catch {
      // EPERM and friends: nothing more can be done while exiting, and throwing here would mask the exit cause.
    }
  }
  liveGroups.clear();
  // Processes the children started outside their group (identified by their session HOME).
  sweepTrackedSync();
}

/**
 * Registers `killAllChildrenSync` on `process.on('exit')`, once per process. The cli calls this
 * at start and calls `killAllChildrenSync` from its own SIGINT/SIGTERM handlers; nothing is
 * installed at import time. Returns a function that removes the hook.
 */
export function installExitCleanup(): () => void {
  if (!exitHookInstalled) {
    process.on('exit', killAllChildrenSync);
    exitHookInstalled = true;
  }
  return () => {
    process.off('exit', killAllChildrenSync);
    exitHookInstalled = false;
  };
}
