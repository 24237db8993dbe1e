import { open } from '../lazy-fs-promises.js';
import type * as NodeTimersPromises from 'node:timers/promises';
import { requireBuiltin } from '../builtin-require.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { RuntimeEvent } from '../events/index.js';
import { parseEventLine } from './event-log.js';

/** How often a follower looks for new lines, in ms. */
export const DEFAULT_FOLLOW_POLL_MS = 100;

// Usual bound of one read while following, so a large backlog is consumed in pieces.
const MAX_READ_BYTES = 1024 * 1024;

/**
 * Yields the events of a log with seq > `afterSeq`, oldest first, then waits for new lines by
 * polling every `pollMs`, until `signal` aborts (the iteration then returns). A line is yielded
 * only once its newline has been written, so a half-written append is never read. The file
 * may not exist yet. Throws `state_corrupt` on a malformed line.
 */
export async function* followEventLog(
  file: string,
  options: { afterSeq?: number; signal?: AbortSignal; pollMs?: number } = {},
): AsyncGenerator<RuntimeEvent, void, undefined> {
  const { afterSeq = 0, signal, pollMs = DEFAULT_FOLLOW_POLL_MS } = options;
  // `offset` only moves past complete lines: an unterminated tail is read again on the next
  // poll, so a writer cutting a torn fragment (and appending after it) is followed correctly.
  let offset = 0;
  let line = 0;
  let readLimit = MAX_READ_BYTES;
  while (!signal?.aborted) {
    const read = await readFrom(file, offset, readLimit);
    if (read.size < offset) {
      throw new OneWorksError(ERROR_CODES.STATE_CORRUPT, `event log ${file} shrank while being followed`, { data: { file } });
    }
    const lastNewline = read.bytes.lastIndexOf(0x0a);
    if (lastNewline === -1) {
      // Only a partial line: wait for its end, reading further next time if it fills the window.
      if (read.bytes.length === readLimit) readLimit *= 2;
      else await pollDelay(pollMs, signal);
      continue;
    }
    readLimit = MAX_READ_BYTES;
    offset += lastNewline + 1;
    let start = 0;
    for (let end = read.bytes.indexOf(0x0a); end !== -1 && end <= lastNewline; end = read.bytes.indexOf(0x0a, start)) {
      line += 1;
      const event = parseEventLine(read.bytes.subarray(start, end).toString('utf8'), file, line);
      start = end + 1;
      if (event.seq > afterSeq) yield event;
      if (signal?.aborted) return;
    }
  }
}

// Waits `ms` (less when `signal` aborts). node:timers/promises is loaded on the first wait, by a
// follower: every command that opens a store loads this module (`sessions` too), and few follow.
async function pollDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  const { setTimeout: delay } = requireBuiltin('node:timers/promises') as typeof NodeTimersPromises;
  await delay(ms, undefined, { signal }).catch(() => undefined);
}

// Bytes from `offset` to the end (bounded), plus the file size; a missing file reads as empty.
async function readFrom(file: string, offset: number, limit: number): Promise<{ bytes: Buffer; size: number }> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { bytes: Buffer.alloc(0), size: 0 };
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size <= offset) return { bytes: Buffer.alloc(0), size };
    const bytes = Buffer.alloc(Math.min(size - offset, limit));
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, offset);
    return { bytes: bytes.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}
