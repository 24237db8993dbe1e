import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

// Process facts for conformance tests, read from Linux /proc: which processes still refer to a
// test's temp root, whether a pid (or group) is alive, and a live process's environment.

/** A process still referring to a rig: its argv, working directory or environment names the rig root. */
export interface RigProcess {
  pid: number;
  args: string;
}

/**
 * Live processes of this user whose argv, working directory or environment contain `needle`,
 * this process excluded. Synchronous so a scripted model step can sample while droid runs.
 */
export function findProcesses(needle: string): RigProcess[] {
  const found: RigProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const read = (file: string): string => {
      try {
        return readFileSync(`/proc/${name}/${file}`, 'latin1');
      } catch {
        return '';
      }
    };
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${name}/cwd`);
    } catch {
      // Gone, or not ours: nothing to read.
    }
    const args = read('cmdline').split('\0').join(' ').trim();
    if (args === '' && cwd === '') continue; // exited (or a zombie) meanwhile
    if (args.includes(needle) || cwd.startsWith(needle) || read('environ').includes(needle)) found.push({ pid: Number(name), args });
  }
  return found;
}

/**
 * Polls `find` every 100 ms until it returns nothing or `timeoutMs` passes; returns what is
 * left. For processes that end by themselves shortly after the CLI (e.g. droid's Execute
 * supervisor, which checks every 2 s whether droid is still alive).
 */
export async function waitForNoProcesses(find: () => RigProcess[], timeoutMs: number): Promise<RigProcess[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = find();
    if (left.length === 0 || Date.now() >= deadline) return left;
    await sleep(100);
  }
}

/**
 * Polls `find` every 100 ms until one of its processes matches; returns all it found then.
 * Throws after `timeoutMs` (default 60 s) when none appeared.
 */
export async function waitForProcess(
  find: () => RigProcess[],
  match: (p: RigProcess) => boolean,
  timeoutMs = 60_000,
): Promise<RigProcess[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = find();
    if (now.some(match)) return now;
    if (Date.now() >= deadline) throw new Error('the expected process never appeared');
    await sleep(100);
  }
}

/** The environment of a live process (Linux /proc), as name → value; empty when it is gone. */
export function processEnv(pid: number): Record<string, string> {
  let raw = '';
  try {
    raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return {};
  }
  const env: Record<string, string> = {};
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/**
 * True while `pid` (or, negative, any member of the process group `-pid`) exists and has not
 * exited: signal 0 reaches it and it is not a zombie (an exited process whose parent has not
 * reaped it yet).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  if (pid > 0) return procStat(String(pid))?.state !== 'Z';
  return readdirSync('/proc').some((name) => {
    const stat = /^\d+$/.test(name) ? procStat(name) : undefined;
    return stat !== undefined && stat.pgrp === -pid && stat.state !== 'Z';
  });
}

// State and process group from /proc/<pid>/stat ("pid (comm) S ppid pgrp ..."); undefined when gone.
function procStat(pid: string): { state: string; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const [state = '', , pgrp = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** Polls until none of `pids` is alive or `timeoutMs` passes; returns the ones still alive. */
export async function waitForExit(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter((pid) => isAlive(pid));
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await sleep(100);
  }
}

/** SIGKILLs `pid`; a process that is already gone is not an error. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
