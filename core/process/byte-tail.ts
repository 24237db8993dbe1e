/** Default size of a child's stderr tail. */
export const DEFAULT_STDERR_TAIL_BYTES = 64 * 1024;

/**
 * A bounded ring of the last `maxBytes` bytes written to it: a child's stderr tail. Memory stays
 * bounded however much the child writes. `text()` decodes as UTF-8; a character cut at the
 * start of the window decodes as U+FFFD.
 */
export class ByteTail {
  readonly #maxBytes: number;
  #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(maxBytes: number = DEFAULT_STDERR_TAIL_BYTES) {
    if (!Number.isInteger(maxBytes) || maxBytes <= 0) throw new RangeError(`maxBytes must be a positive integer, got ${maxBytes}`);
    this.#maxBytes = maxBytes;
  }

  /** Appends a chunk, dropping the oldest bytes beyond the bound. */
  push(chunk: Buffer): void {
    if (chunk.length >= this.#maxBytes) {
      this.#chunks = [Buffer.from(chunk.subarray(chunk.length - this.#maxBytes))];
      this.#bytes = this.#maxBytes;
      return;
    }
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes > this.#maxBytes) {
      const first = this.#chunks[0]!;
      const excess = this.#bytes - this.#maxBytes;
      if (first.length <= excess) {
        this.#chunks.shift();
        this.#bytes -= first.length;
      } else {
        this.#chunks[0] = first.subarray(excess);
        this.#bytes -= excess;
      }
    }
  }

  /** Bytes currently held (never more than the bound). */
  get byteLength(): number {
    return this.#bytes;
  }

  /** The held bytes decoded as UTF-8. */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}
