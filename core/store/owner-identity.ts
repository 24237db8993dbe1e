import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { OwnerRecord } from './records.js';

/**
 * Who a pid is, beyond `kill(pid, 0)`: after a reboot (or a long uptime) a stale owner file's pid
 * may belong to any unrelated process. On Linux the kernel gives each process a start time (clock
 * ticks since boot, /proc/<pid>/stat field 22) and each boot an id; together with the pid they
 * name one process for good. Elsewhere (no /proc) only the pid can be checked.
 */

/** Linux reports /proc start times in USER_HZ, which is 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
/** How much later than its recorded `startedAt` an owner's process may have started (clock granularity). */
const START_SLACK_MS = 2_000;

/** The kernel's identity of a live process: start time since boot and the boot's id. */
export interface ProcessIdentity {
  /** /proc/<pid>/stat field 22, in clock ticks since boot, as a decimal string. */
  startTicks: string;
  bootId: string;
}

/** The identity of `pid`, or undefined when it is gone or /proc is not available. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const startTicks = procStartTicks(pid);
  const bootId = readText('/proc/sys/kernel/random/boot_id');
  return startTicks === undefined || bootId === undefined ? undefined : { startTicks, bootId };
}

/** The owner record of this process, with its kernel identity where the OS provides one. */
export function ownerRecordOfThisProcess(now: Date = new Date()): OwnerRecord {
  const identity = processIdentity(process.pid);
  return {
    pid: process.pid,
    host: hostname(),
    startedAt: now.toISOString(),
    ...(identity ? { procStart: identity.startTicks, bootId: identity.bootId } : {}),
  };
}

/**
 * Whether the process that wrote `owner` (on this host) still runs. A pid that is gone (or a
 * zombie) is dead.
 * A live pid is the owner only if it is the same process: same boot id and start time when the
 * record carries them; for a record without them (an older One Works, or written by hand), a
 * process that started after the record's `startedAt` cannot have written it. Where /proc is
 * not readable, a live pid counts as the owner.
 */
export function isOwnerAlive(owner: OwnerRecord): boolean {
  if (!pidExists(owner.pid) || isZombie(owner.pid)) return false;
  const identity = processIdentity(owner.pid);
  if (!identity) return true;
  if (owner.bootId !== undefined && owner.bootId !== identity.bootId) return false;
  if (owner.procStart !== undefined) return owner.procStart === identity.startTicks;
  const startedAtMs = Date.parse(owner.startedAt);
  const processStartMs = processStartWallMs(identity.startTicks);
  if (Number.isNaN(startedAtMs) || processStartMs === undefined) return true;
  return processStartMs <= startedAtMs + START_SLACK_MS;
}

// kill(pid, 0) probes without signalling; EPERM means the pid exists under another user.
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

// A killed process not yet reaped by its parent still answers kill(pid, 0); it is dead all the same.
function isZombie(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  return stat?.slice(stat.lastIndexOf(')') + 2).startsWith('Z') === true;
}

// Field 22 of /proc/<pid>/stat; the command name (field 2) may hold spaces and parentheses, so
// fields are counted after its closing parenthesis.
function procStartTicks(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = fields[19];
  return ticks !== undefined && /^\d+$/.test(ticks) ? ticks : undefined;
}

// Wall-clock start of a process: boot time (btime in /proc/stat) plus its start ticks.
function processStartWallMs(startTicks: string): number | undefined {
  const btime = /^btime (\d+)$/m.exec(readText('/proc/stat') ?? '')?.[1];
  if (btime === undefined) return undefined;
  return Number(btime) * 1000 + (Number(startTicks) / CLOCK_TICKS_PER_SECOND) * 1000;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}
