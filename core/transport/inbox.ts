/**
 * Holds inbound messages while no handler is set, then delivers them in order. Backs the
 * `onmessage` accessor of the transports, so that messages arriving between `start()` and the
 * moment a handler is attached are not lost.
 */
export class Inbox {
  #handler: ((message: unknown) => void) | undefined;
  #backlog: unknown[] = [];

  get handler(): ((message: unknown) => void) | undefined {
    return this.#handler;
  }

  set handler(handler: ((message: unknown) => void) | undefined) {
    this.#handler = handler;
    this.#flush();
  }

  /** Hands `message` to the handler, or keeps it until one is set. */
  deliver(message: unknown): void {
    // The usual case, a handler and nothing held: straight through, without queueing.
    if (this.#handler !== undefined && this.#backlog.length === 0) {
      this.#handler(message);
      return;
    }
    this.#backlog.push(message);
    this.#flush();
  }

  // Delivers in arrival order; a handler that is replaced or unset mid-flush stops the loop.
  #flush(): void {
    while (this.#handler !== undefined && this.#backlog.length > 0) {
      const handler = this.#handler;
      handler(this.#backlog.shift());
    }
  }
}
