import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ResultPromise } from 'execa';
import { afterEach } from 'vitest';

/**
 * Resolves once the `serve` child has said `orchestrator serving` on stderr; rejects with what it
 * said when it exits first or does not serve within `timeoutMs`.
 */
export function untilServing(serve: { stderr?: Readable | null } & PromiseLike<unknown>, timeoutMs: number): Promise<void> {
  let said = '';
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve not ready in ${timeoutMs} ms: ${said}`)), timeoutMs);
    serve.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('orchestrator serving')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void serve.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited before serving: ${said}`));
    });
  });
}

/**
 * A `serve` child and a temporary directory per test: `afterEach` (registered here) SIGTERMs the
 * child still held in `current.server` and waits for it, then removes `current.dir`.
 */
export function useServeChild(): { server: ResultPromise | undefined; dir: string | undefined } {
  const current: { server: ResultPromise | undefined; dir: string | undefined } = { server: undefined, dir: undefined };
  afterEach(async () => {
    if (current.server) {
      current.server.kill('SIGTERM');
      await current.server.catch(() => undefined);
    }
    current.server = undefined;
    if (current.dir) await rm(current.dir, { recursive: true, force: true });
    current.dir = undefined;
  });
  return current;
}
