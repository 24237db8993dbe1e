import { fstatSync, writeSync } from 'node:fs';

/** Where the CLI writes text: this process's stdout or stderr ({@link PROCESS_STDOUT}), or a client's stand-in. */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * This process's stdout or stderr, whose Node stream is made only when it is needed. Making
 * `process.stdout` for a pipe loads node:net and the stream modules: some 6 ms of a 150 ms
 * `one-works sessions` on a small machine. On Linux a write to a pipe, a file or a socket is
 * synchronous either way (Node's stream writes at once, and queues only what the descriptor would
 * not take), so text goes straight to the descriptor with `writeSync` while that takes it all.
 * The stream is made, and takes every later write, for a terminal or any other kind of
 * descriptor, on another platform, when a write fails (`EAGAIN` on a descriptor left
 * non-blocking, `EPIPE`: the stream then says so as it always did) with the rest of that text,
 * and when its `isTTY` or `columns` is asked of anything but a pipe, file or socket. So text is
 * neither lost nor reordered among the writes that go through here: the CLI writes all of its
 * own through these two, never through `process.stdout` or `process.stderr` directly.
 */
class ProcessSink implements TextSink {
  readonly #name: 'stdout' | 'stderr';
  // Whether the descriptor's kind lets text go to it straight: decided on first use.
  #direct: boolean | undefined;
  #stream: NodeJS.WriteStream | undefined;

  constructor(name: 'stdout' | 'stderr') {
    this.#name = name;
  }

  /** The Node stream when this sink made it (undefined while every write went to the descriptor). */
  get made(): NodeJS.WriteStream | undefined {
    return this.#stream;
  }

  get isTTY(): boolean {
    return this.#isDirect() ? false : this.#made().isTTY === true;
  }

  get columns(): number | undefined {
    return this.#isDirect() ? undefined : this.#made().columns;
  }

  write(text: string): boolean {
    if (!this.#isDirect()) return this.#made().write(text);
    const fd = this.#name === 'stdout' ? 1 : 2;
    const bytes = Buffer.from(text);
    let offset = 0;
    try {
      while (offset < bytes.length) {
        const written = writeSync(fd, bytes, offset);
        // A descriptor that takes nothing and says no error: the stream deals with it from here.
        if (written <= 0) throw new Error('nothing written');
        offset += written;
      }
      return true;
    } catch {
      return this.#made().write(bytes.subarray(offset));
    }
  }

  // The Node stream, made now if it was not: it takes every later write.
  #made(): NodeJS.WriteStream {
    this.#stream ??= process[this.#name];
    return this.#stream;
  }

  // True while text may go straight to the descriptor: on Linux, for a pipe, file or socket, until the stream is made.
  #isDirect(): boolean {
    this.#direct ??= process.platform === 'linux' && writesSynchronously(this.#name === 'stdout' ? 1 : 2);
    return this.#direct && this.#stream === undefined;
  }
}

function writesSynchronously(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
}

/** This process's stdout: see {@link ProcessSink}. */
export const PROCESS_STDOUT = new ProcessSink('stdout');
/** This process's stderr: see {@link ProcessSink}. */
export const PROCESS_STDERR = new ProcessSink('stderr');

/**
 * Whether stdin is a terminal, without making `process.stdin` when it cannot be one (only a
 * character device can: a pipe, a file or a socket is not asked further).
 */
export function stdinIsTTY(): boolean {
  try {
    if (!fstatSync(0).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return process.stdin.isTTY === true;
}

/**
 * Resolves once everything written through {@link PROCESS_STDOUT} and {@link PROCESS_STDERR} is
 * written: at once when it all went to the descriptors; otherwise when each stream they made has
 * handed its queue over (a pipe its reader has not emptied yet keeps the rest in the stream, which
 * `process.exit()` alone would drop). Never rejects.
 */
export function outputWritten(): Promise<void> {
  const unwritten = [PROCESS_STDOUT.made, PROCESS_STDERR.made].filter(
    (stream): stream is NodeJS.WriteStream => stream !== undefined && stream.writableLength > 0,
  );
  // The callback of an empty write runs once every write before it is done (or failed).
  return Promise.all(unwritten.map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve())))).then(() => undefined);
}
