import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/processes');

/** Absolute path of a fixture script in test/fixtures/processes. */
export function fixture(name: string): string {
  return path.join(FIXTURES, name);
}

/** Options for spawnChild running a fixture script with this Node binary and a minimal env. */
export function nodeFixture(
  name: string,
  args: string[] = [],
): { command: string; args: string[]; cwd: string; env: Record<string, string> } {
  return { command: process.execPath, args: [fixture(name), ...args], cwd: FIXTURES, env: { PATH: process.env.PATH ?? '' } };
}

/** The errno `process.kill(pid, 0)` fails with, or undefined while the pid exists. */
export function probe(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
}

/**
 * Waits until `pid` no longer exists. Needed for grandchildren only: once their parent is gone
 * they are reparented to init, which reaps them on its own schedule. Gives up after `boundMs`
 * (the caller's assertion then fails).
 */
export async function waitUntilGone(pid: number, boundMs = 10_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (probe(pid) !== 'ESRCH' && Date.now() < until) await delay(25);
}

/** The first line a stream produces (without its newline). */
export async function firstLine(stream: Readable): Promise<string> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    const [line] = (await once(lines, 'line')) as [string];
    return line;
  } finally {
    lines.close();
  }
}
