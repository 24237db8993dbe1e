import { readFile } from 'node:fs/promises';

/** Deepest level of descendants counted (bwrap → agent CLI → tools). */
const MAX_DEPTH = 4;

/**
 * Resident memory (VmRSS) of `pid` and its descendants, in bytes, read from /proc (Linux).
 * Resolves undefined when /proc cannot tell (another OS, or the process is gone). Shared pages
 * are counted once per process, so this errs high, which is the safe side of a budget.
 */
export async function residentBytes(pid: number, depth = 0): Promise<number | undefined> {
  const own = await rssOf(pid);
  if (own === undefined) return undefined;
  if (depth >= MAX_DEPTH) return own;
  let total = own;
  for (const child of await childrenOf(pid)) total += (await residentBytes(child, depth + 1)) ?? 0;
  return total;
}

async function rssOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kb = status?.match(/^VmRSS:\s+(\d+)\s+kB/m)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text
    .split(/\s+/)
    .filter((id) => id !== '')
    .map(Number);
}
