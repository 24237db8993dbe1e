import type { Readable } from 'node:stream';

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
