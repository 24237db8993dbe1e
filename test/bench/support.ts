import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

/** Helpers every bench part shares: the command under test, start-up timing, medians, clean-up. */

/** The `one-works` command the bench times (cli/bin.cjs, the package's `bin`: the build when it is current). */
export const BIN = fileURLToPath(new URL('../../cli/bin.cjs', import.meta.url));

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Runs `one-works --json run [--adapter A] hello` in `<dir>/ws` and returns the ms from its start to
 * the `session.started` event it prints; waits for the command to end.
 */
export async function oneWorksStartup(dir: string, config: string, adapter?: string): Promise<number> {
  const t0 = performance.now();
  const args = ['--config', config, '--json', 'run', ...(adapter ? ['--adapter', adapter] : []), '--workspace', join(dir, 'ws'), 'hello'];
  const child = execa(BIN, args, { reject: false, buffer: false });
  let elapsed: number | undefined;
  let buffered = '';
  for await (const chunk of child.stdout!) {
    buffered += String(chunk);
    if (elapsed === undefined && buffered.includes('"type":"session.started"')) elapsed = performance.now() - t0;
  }
  await child;
  if (elapsed === undefined) {
    throw new Error(`one-works run${adapter ? ` --adapter ${adapter}` : ''} printed no session.started event (exit ${child.exitCode})`);
  }
  return elapsed;
}

/** SIGTERM to the state directory's orchestrator (its pid is in owner.json), then waits for it to go (10 s, then SIGKILL). */
export async function stopOrchestrator(stateDir: string): Promise<void> {
  const owner = JSON.parse(await readFile(join(stateDir, 'owner.json'), 'utf8').catch(() => '{}')) as { pid?: number };
  if (owner.pid === undefined) return;
  try {
    process.kill(owner.pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let waited = 0; waited < 10_000; waited += 50) {
    try {
      process.kill(owner.pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.kill(owner.pid, 'SIGKILL');
}
