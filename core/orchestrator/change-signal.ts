/**
 * A level-triggered wake-up for waiters on orchestrator state: `changed()` re-tests every
 * pending condition; `until` resolves once its condition holds or its timeout passes.
 */
export class ChangeSignal {
  readonly #watchers = new Set<() => void>();

  /** Something changed: every waiter re-tests its condition. */
  changed(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  /** Resolves true once `done()` holds (tested now and on every change), false after `timeoutMs` (Infinity: never). */
  until(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (value: boolean): void => {
        this.#watchers.delete(check);
        if (timer) clearTimeout(timer);
        resolve(value);
      };
      const check = (): void => {
        if (done()) finish(true);
      };
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => finish(false), Math.max(0, timeoutMs)) : undefined;
      this.#watchers.add(check);
    });
  }
}
