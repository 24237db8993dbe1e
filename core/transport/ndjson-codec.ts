import { ERROR_CODES, OneWorksError } from '../errors.js';

/** Default cap on one NDJSON line, in bytes (newline excluded): 16 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Longest copy of a bad line kept in an `invalid` result, in characters. */
export const MAX_REPORTED_LINE_CHARS = 200;

const NEWLINE = 0x0a;

/** One result of {@link NdjsonCodec.next}. */
export type CodecResult = { kind: 'message'; value: unknown } | { kind: 'invalid'; line: string; reason: string };

export interface NdjsonCodecOptions {
  /** Lines longer than this many bytes are reported as invalid and skipped. Default {@link DEFAULT_MAX_LINE_BYTES}. */
  maxLineBytes?: number;
}

// What waits to be read: a line that was assembled from pieces, the marker for a line that was
// too long, or a run of complete lines decoded from one chunk in a single pass (read line by line
// from `pos`; `ascii` when every byte became one character, so character and byte offsets agree).
type QueuedLine =
  | { kind: 'line'; bytes: Buffer }
  | { kind: 'oversized'; head: Buffer }
  | { kind: 'run'; text: string; bytes: Buffer; ascii: boolean; pos: number; bytePos: number };

/**
 * Splits a byte stream into newline-delimited JSON messages. Pure: no I/O, no timers.
 *
 * Works on bytes, so a multi-byte UTF-8 character split across chunks is decoded whole. CRLF is
 * accepted, blank lines are ignored, and a line that is not JSON is reported as `invalid` without
 * affecting later lines. A line longer than `maxLineBytes` is reported as `invalid` as soon as it
 * crosses the cap and the rest of it is discarded up to the next newline, so it is never held in
 * memory whole.
 */
export class NdjsonCodec {
  readonly maxLineBytes: number;
  #queue: QueuedLine[] = [];
  /** Index of the next queued line: a read position instead of `shift()`, which is O(n) per call on a long queue. */
  #head = 0;
  #partial: Buffer[] = [];
  #partialBytes = 0;
  #discarding = false;

  constructor(options: NdjsonCodecOptions = {}) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isInteger(max) || max < 1) {
      throw new OneWorksError(ERROR_CODES.INTERNAL, `maxLineBytes must be a positive integer, got ${max}`);
    }
    this.maxLineBytes = max;
  }

  /** Adds bytes (strings are encoded as UTF-8). Complete lines become available to {@link next}. */
  append(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const first = bytes.indexOf(NEWLINE);
    if (first === -1) {
      this.#take(bytes, true);
      return;
    }
    // The line in progress (from earlier chunks, or being discarded) ends at the first newline.
    let start = 0;
    if (this.#partialBytes > 0 || this.#discarding) {
      this.#take(bytes.subarray(0, first), false);
      this.#endLine();
      start = first + 1;
    }
    // Every line between here and the last newline is complete: decoded in one pass (a newline
    // byte never occurs inside a multi-byte character, so lines split the same in text as in bytes).
    const last = bytes.lastIndexOf(NEWLINE);
    if (last >= start) {
      const text = bytes.toString('utf8', start, last + 1);
      const run = bytes.subarray(start, last + 1);
      this.#queue.push({ kind: 'run', text, bytes: run, ascii: text.length === run.length, pos: 0, bytePos: 0 });
    }
    if (last + 1 < bytes.length) this.#take(bytes.subarray(last + 1), true);
  }

  /**
   * Marks the end of input: an unterminated last line is treated as complete. Call it once the
   * source has ended; appending afterwards starts a new line.
   */
  end(): void {
    if (this.#partialBytes > 0 || this.#discarding) this.#endLine();
  }

  /** The next message or invalid line, or `undefined` when no complete line is buffered. */
  next(): CodecResult | undefined {
    for (let queued = this.#peek(); queued !== undefined; queued = this.#peek()) {
      if (queued.kind === 'run') {
        const result = this.#nextInRun(queued);
        if (result !== undefined) return result;
        continue;
      }
      this.#advance();
      if (queued.kind === 'oversized') return this.#oversized(queued.head.toString('utf8'));
      const result = parseLine(queued.bytes.toString('utf8'));
      if (result !== undefined) return result;
    }
    return undefined;
  }

  // The next result from a run of decoded lines; undefined for a blank line. Takes the run off
  // the queue once its last line was read.
  #nextInRun(run: Extract<QueuedLine, { kind: 'run' }>): CodecResult | undefined {
    const end = run.text.indexOf('\n', run.pos);
    const line = run.text.slice(run.pos, end);
    run.pos = end + 1;
    let lineBytes = line.length;
    if (!run.ascii) {
      const byteEnd = run.bytes.indexOf(NEWLINE, run.bytePos);
      lineBytes = byteEnd - run.bytePos;
      run.bytePos = byteEnd + 1;
    }
    if (run.pos === run.text.length) this.#advance();
    const result = lineBytes > this.maxLineBytes ? this.#oversized(line) : parseLine(line);
    // An invalid line keeps its own copy: a slice would keep the whole run's text alive.
    if (result?.kind === 'invalid') result.line = detach(result.line);
    return result;
  }

  // The report of a line longer than the cap, from its first characters.
  #oversized(head: string): CodecResult {
    return {
      kind: 'invalid',
      line: truncateLine(head),
      reason: `line exceeds maxLineBytes (${this.maxLineBytes} bytes); skipped`,
    };
  }

  // The oldest queued entry (left in place); the queue is emptied once every entry was read.
  #peek(): QueuedLine | undefined {
    if (this.#head >= this.#queue.length) {
      if (this.#head > 0) {
        this.#queue = [];
        this.#head = 0;
      }
      return undefined;
    }
    return this.#queue[this.#head];
  }

  // Drops the oldest queued entry (its slot is cleared so that its bytes can be collected).
  #advance(): void {
    this.#queue[this.#head] = undefined as never;
    this.#head += 1;
  }

  /** Drops everything buffered, including a partly received or partly discarded line. */
  clear(): void {
    this.#queue = [];
    this.#head = 0;
    this.#partial = [];
    this.#partialBytes = 0;
    this.#discarding = false;
  }

  // Adds one newline-free piece to the current line, switching to discard mode past the cap.
  #take(piece: Buffer, trailing: boolean): void {
    if (this.#discarding || piece.length === 0) return;
    if (this.#partialBytes + piece.length > this.maxLineBytes) {
      // Keep only enough bytes for the truncated report (4 bytes per character at most).
      const head = Buffer.concat([...this.#partial, piece]).subarray(0, MAX_REPORTED_LINE_CHARS * 4);
      this.#queue.push({ kind: 'oversized', head: Buffer.from(head) });
      this.#partial = [];
      this.#partialBytes = 0;
      this.#discarding = true;
      return;
    }
    // Copy a trailing piece so a large chunk is not retained for a few leftover bytes.
    this.#partial.push(trailing ? Buffer.from(piece) : piece);
    this.#partialBytes += piece.length;
  }

  // Closes the current line at a newline (or at end of input).
  #endLine(): void {
    if (!this.#discarding) {
      // A line that arrived in one piece (the usual case) is queued as it is: no copy per line.
      const bytes = this.#partial.length === 1 ? this.#partial[0]! : Buffer.concat(this.#partial, this.#partialBytes);
      this.#queue.push({ kind: 'line', bytes });
    }
    this.#partial = [];
    this.#partialBytes = 0;
    this.#discarding = false;
  }
}

// One complete line (newline excluded) as a result; undefined for a blank line. CRLF is accepted.
function parseLine(text: string): CodecResult | undefined {
  const line = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (line.length === 0) return undefined;
  try {
    return { kind: 'message', value: JSON.parse(line) as unknown };
  } catch (error) {
    if (line.trim() === '') return undefined;
    const detail = error instanceof Error ? error.message : String(error);
    return { kind: 'invalid', line: truncateLine(line), reason: `invalid JSON: ${detail}` };
  }
}

// A copy of `text` that shares no memory with the string it was sliced from.
function detach(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/**
 * Serialises one message as a single NDJSON line (JSON plus `\n`). JSON escapes newlines inside
 * strings, so the result never contains a raw newline before the last character. Throws
 * OneWorksError INTERNAL for values JSON cannot represent (undefined, BigInt, cycles).
 */
export function serializeMessage(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, 'cannot serialise message as JSON', { cause: error });
  }
  if (json === undefined) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `cannot serialise a ${typeof value} as JSON`);
  }
  return `${json}\n`;
}

/** Shortens a line for error reports to {@link MAX_REPORTED_LINE_CHARS} characters, marking the cut. */
export function truncateLine(line: string): string {
  if (line.length <= MAX_REPORTED_LINE_CHARS) return line;
  let cut = MAX_REPORTED_LINE_CHARS;
  // Do not split a surrogate pair.
  const code = line.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${line.slice(0, cut)}…`;
}
