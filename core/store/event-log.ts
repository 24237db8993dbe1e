import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { open, readFile } from '../lazy-fs-promises.js';
import type { FileHandle } from 'node:fs/promises';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { isValidRecordedEvent, parseRuntimeEvent, type RuntimeEvent } from '../events/index.js';
import { PRIVATE_FILE_MODE } from './private-fs.js';

/**
 * The append-only event log of one session: one RuntimeEvent per line (JSON Lines), 0600.
 * A crash mid-append can leave a torn final line (no newline, not valid JSON): readers ignore
 * it and the next writer cuts it off before appending. Any other malformed line is
 * `state_corrupt`, naming the file and line.
 */

const NEWLINE = 0x0a;

/**
 * The events in a log's bytes, oldest first. `tornBytes` counts a trailing fragment that is not a
 * complete event. With `types`, only events of those types are returned; every other line is still
 * checked (a malformed one is `state_corrupt` all the same) but not built.
 */
export function parseEventLog(bytes: Buffer, file: string, types?: ReadonlySet<string>): { events: RuntimeEvent[]; tornBytes: number } {
  const events: RuntimeEvent[] = [];
  let start = 0;
  let line = 0;
  for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
    line += 1;
    const text = bytes.subarray(start, end).toString('utf8');
    if (!types) events.push(parseEventLine(text, file, line));
    else {
      const event = checkEventLine(text, file, line, types);
      if (event) events.push(event);
    }
    start = end + 1;
  }
  if (start === bytes.length) return { events, tornBytes: 0 };
  // A final line without its newline: complete if it parses, torn otherwise.
  const fragment = bytes.subarray(start).toString('utf8');
  const event = tryParseEvent(fragment);
  if (event && (!types || types.has(event.type))) events.push(event);
  return { events, tornBytes: event ? 0 : bytes.length - start };
}

// A line of one of `types`, parsed; any other line only checked: the quick check passes what the
// schema accepts without building its copy, and the schema itself decides the rest.
function checkEventLine(text: string, file: string, line: number, types: ReadonlySet<string>): RuntimeEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw corruptLine(file, line, error);
  }
  const type = typeof json === 'object' && json !== null ? (json as { type?: unknown }).type : undefined;
  if (typeof type === 'string' && types.has(type)) return parsedLine(json, file, line);
  if (!isValidRecordedEvent(json)) parsedLine(json, file, line);
  return undefined;
}

/** Parses one complete line; throws `state_corrupt` naming the file and line number. */
export function parseEventLine(text: string, file: string, line: number): RuntimeEvent {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw corruptLine(file, line, error);
  }
  return parsedLine(json, file, line);
}

function parsedLine(json: unknown, file: string, line: number): RuntimeEvent {
  // Only the member of the line's type is built: reading a few lines builds a few members.
  const parsed = parseRuntimeEvent(json);
  if (!parsed.success) throw corruptLine(file, line, parsed.error);
  return parsed.data as RuntimeEvent;
}

/**
 * Reads and parses a log; a missing file is an empty log. With `sync`, the file is read with one
 * synchronous call (see FileStoreOptions.syncReads); with `types`, see parseEventLog.
 */
export async function readEventLog(file: string, options: { sync?: boolean; types?: ReadonlySet<string> } = {}): Promise<RuntimeEvent[]> {
  const bytes = options.sync ? readSyncOrEmpty(file) : await readFile(file).catch(emptyWhenMissing);
  return parseEventLog(bytes, file, options.types).events;
}

function readSyncOrEmpty(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    return emptyWhenMissing(error as NodeJS.ErrnoException);
  }
}

function emptyWhenMissing(error: NodeJS.ErrnoException): Buffer {
  if (error.code === 'ENOENT') return Buffer.alloc(0);
  throw error;
}

/**
 * Appends `lines` (each already ending in a newline) with one write, creating the file 0600.
 * With `repair`, first makes the log end at a line boundary: a valid unterminated final event
 * gets its newline, a torn fragment is cut off. `fsync` flushes the file before resolving.
 */
export async function appendToEventLog(file: string, lines: string, options: { repair: boolean; fsync: boolean }): Promise<void> {
  const handle = await open(file, 'a+', PRIVATE_FILE_MODE);
  try {
    if (options.repair && !(await endsAtLineBoundary(handle))) {
      const bytes = await handle.readFile();
      const lastNewline = bytes.lastIndexOf(NEWLINE);
      const { tornBytes } = parseEventLog(bytes.subarray(lastNewline + 1), file);
      if (tornBytes > 0) await handle.truncate(lastNewline + 1);
      else lines = `\n${lines}`;
    }
    const data = Buffer.from(lines, 'utf8');
    let written = 0;
    // One write call per batch; the loop only runs again on a short write.
    while (written < data.length) written += (await handle.write(data, written)).bytesWritten;
    if (options.fsync) await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * {@link appendToEventLog} without `fsync`, with synchronous calls: a batch goes to the page cache
 * in some 0.1 ms, where the asynchronous calls are four thread-pool round trips (open, write,
 * close, and the lstat of its directory), each waiting for a thread to be scheduled on a machine
 * whose cores the agent keeps busy. The last batch of a turn is on the path of the command waiting
 * for that turn to settle. An fsynced batch stays asynchronous: a flush can take the event loop
 * for as long as the disk wants.
 */
export function appendToEventLogSync(file: string, lines: string, options: { repair: boolean }): void {
  const fd = openSync(file, 'a+', PRIVATE_FILE_MODE);
  try {
    if (options.repair) {
      const { size } = fstatSync(fd);
      const last = Buffer.alloc(1);
      if (size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== NEWLINE) {
        const bytes = Buffer.alloc(size);
        for (let read = 0; read < size; ) read += readSync(fd, bytes, read, size - read, read);
        const lastNewline = bytes.lastIndexOf(NEWLINE);
        const { tornBytes } = parseEventLog(bytes.subarray(lastNewline + 1), file);
        if (tornBytes > 0) ftruncateSync(fd, lastNewline + 1);
        else lines = `\n${lines}`;
      }
    }
    const data = Buffer.from(lines, 'utf8');
    // One write call per batch; the loop only runs again on a short write (appended: O_APPEND).
    for (let written = 0; written < data.length; ) written += writeSync(fd, data, written, data.length - written);
  } finally {
    closeSync(fd);
  }
}

// True for an empty log or one whose last byte is a newline: the usual case, checked with one byte.
async function endsAtLineBoundary(handle: FileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] === NEWLINE;
}

// A fragment that happens to be a whole event (only its newline was lost) is kept.
function tryParseEvent(text: string): RuntimeEvent | undefined {
  try {
    const parsed = parseRuntimeEvent(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function corruptLine(file: string, line: number, cause: unknown): OneWorksError {
  return new OneWorksError(
    ERROR_CODES.STATE_CORRUPT,
    `event log ${file} is malformed at line ${line}; One Works will not rewrite it (move it away to start the log afresh)`,
    { data: { file, line }, cause },
  );
}
