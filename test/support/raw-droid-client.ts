import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { RawDroidError, notificationOf, rawRequest, rawResponse, turnCompletedFor } from './raw-droid-frames.js';
import type { RawFrame } from './raw-droid-frames.js';
import { rawDroidArgs, rawDroidEnv, writeRawDroidSettings } from './raw-droid-launch.js';

export { RawDroidError, isNotification, notificationOf, turnCompletedFor } from './raw-droid-frames.js';
export type { RawFrame } from './raw-droid-frames.js';
export { RAW_DROID_OFFLINE_ENV, rawDroidArgs, rawDroidEnv, writeRawDroidSettings } from './raw-droid-launch.js';

export interface RawDroidOptions {
  /** The droid executable (the real CLI or test/peers/fake-droid). */
  binary: string;
  /** Workspace, passed as `--cwd` and used as the child's cwd. */
  cwd: string;
  /** Isolated HOME for the child. */
  home: string;
  /** When given, written to `<home>/.factory/settings.json` before the start. */
  settings?: Record<string, unknown>;
  /** Added to the minimal environment (see rawDroidEnv); wins over the defaults. */
  env?: Record<string, string>;
  /** Extra argv after the stream-jsonrpc flags. */
  args?: string[];
  /**
   * Answers droid → client requests. Default: `droid.request_permission` → proceed_once,
   * `droid.ask_user` → cancelled, anything else → error -32601. Throwing sends error -32603.
   */
  onServerRequest?: (method: string, params: unknown) => unknown;
}

export interface WaitOptions {
  timeoutMs?: number;
  /** Index into `frames` where the search starts (default 0: frames already received count). */
  since?: number;
}

/** What `runTurn` resolves with. */
export interface RawTurn {
  turnId: string;
  /** The `agent_turn_completed` notification object. */
  completion: Record<string, unknown>;
  /** Every frame received from the add_user_message request up to the completion. */
  frames: RawFrame[];
}

interface Waiter {
  predicate: (frame: RawFrame) => boolean;
  resolve: (frame: RawFrame) => void;
  reject: (error: Error) => void;
}

const STDERR_TAIL_BYTES = 64 * 1024;

/**
 * A deliberately minimal stream-jsonrpc client for droid: one child in its own process group,
 * string ids, every inbound frame kept in `frames`. No schemas, no dependency on core/ or
 * adapters/ — it is the baseline for benchmarks and a probe for the real CLI. `close()` must be
 * called; it kills the whole group and waits for the exit.
 */
export class RawDroidClient {
  /** Every parsed stdout frame, in arrival order. */
  readonly frames: RawFrame[] = [];
  /** stdout lines that were not JSON objects. */
  readonly invalidLines: string[] = [];
  /** Resolves when droid's stdout ends (EOF), which may be before or after the exit. */
  readonly stdoutEnded: Promise<void>;
  /** Resolves with the exit status; never rejects. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #child: ChildProcessWithoutNullStreams;
  #options: RawDroidOptions;
  #pending = new Map<string, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  #waiters = new Set<Waiter>();
  #nextId = 0;
  #stderr = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(child: ChildProcessWithoutNullStreams, options: RawDroidOptions) {
    this.#child = child;
    this.#options = options;
    child.stdin.on('error', () => undefined); // EPIPE after the child exits; the exit handler reports it.
    child.stderr.on('data', (data: Buffer) => {
      this.#stderr = (this.#stderr + data.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => this.#onLine(line));
    this.stdoutEnded = new Promise((resolve) => child.stdout.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        const error = new RawDroidError(`droid exited (code ${code}, signal ${signal}); stderr: ${this.#stderr.slice(-2000)}`);
        for (const pending of this.#pending.values()) pending.reject(error);
        for (const waiter of this.#waiters) waiter.reject(error);
        this.#pending.clear();
        this.#waiters.clear();
        resolve({ code, signal });
      });
    });
  }

  /** The child's pid (also its process group id). */
  get pid(): number {
    return this.#child.pid as number;
  }

  /** The last 64 KiB of stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Writes one raw line (no validation): for protocol-error probes. */
  writeLine(line: string): void {
    this.#child.stdin.write(`${line}\n`);
  }

  /** Sends a request and resolves with its `result`; an error response rejects with RawDroidError(code). */
  request(method: string, params: unknown = {}, options: { timeoutMs?: number } = {}): Promise<unknown> {
    this.#nextId += 1;
    const id = `r${this.#nextId}`;
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      if (this.#exit !== undefined) return reject(new RawDroidError(`droid already exited; cannot send ${method}`));
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new RawDroidError(`no response to ${method} (${id}) within ${timeoutMs} ms`));
      }, timeoutMs);
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          fn(value);
        };
      this.#pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.writeLine(JSON.stringify(rawRequest(id, method, params)));
    });
  }

  /** Resolves with the first frame (from `since`, default 0) matching `predicate`. */
  waitFor(predicate: (frame: RawFrame) => boolean, options: WaitOptions = {}): Promise<RawFrame> {
    const found = this.frames.slice(options.since ?? 0).find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    const timeoutMs = options.timeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      if (this.#exit !== undefined) return reject(new RawDroidError('droid already exited; nothing more will arrive'));
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new RawDroidError(`no matching frame within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter: Waiter = {
        predicate,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#waiters.add(waiter);
    });
  }

  /**
   * Sends `add_user_message` with `messageId` (default a new UUID) and resolves on the
   * `agent_turn_completed` whose `turnId` is that id — never on idle or the `{}` response.
   */
  async runTurn(
    text: string,
    options: { messageId?: string; timeoutMs?: number; params?: Record<string, unknown> } = {},
  ): Promise<RawTurn> {
    const turnId = options.messageId ?? randomUUID();
    const since = this.frames.length;
    const completed = this.waitFor(turnCompletedFor(turnId), { since, timeoutMs: options.timeoutMs ?? 120_000 });
    try {
      await this.request('droid.add_user_message', { ...options.params, text, messageId: turnId });
    } catch (error) {
      completed.catch(() => undefined); // settled later by the exit or its deadline; nobody waits for it now
      throw error;
    }
    const frame = await completed;
    return { turnId, completion: notificationOf(frame) ?? {}, frames: this.frames.slice(since, this.frames.indexOf(frame) + 1) };
  }

  /**
   * Ends stdin, SIGTERMs the process group, SIGKILLs it after `graceMs` (default 3000), and
   * resolves once the child has exited. Safe to call twice.
   */
  async close(options: { graceMs?: number } = {}): Promise<void> {
    this.#child.stdin.end();
    if (this.#exit === undefined) this.#signalGroup('SIGTERM');
    const timer = setTimeout(() => this.#signalGroup('SIGKILL'), options.graceMs ?? 3000);
    await this.exited;
    clearTimeout(timer);
    this.#signalGroup('SIGKILL'); // Tool children (Execute) may outlive the leader.
  }

  #signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  #onLine(line: string): void {
    if (line.trim() === '') return;
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch {
      this.invalidLines.push(line);
      return;
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
      this.invalidLines.push(line);
      return;
    }
    const raw = frame as RawFrame;
    this.frames.push(raw);
    if (raw.type === 'response' && typeof raw.id === 'string') this.#onResponse(raw);
    if (raw.type === 'request' && typeof raw.id === 'string') void this.#onServerRequest(raw.id, raw);
    for (const waiter of [...this.#waiters]) {
      if (waiter.predicate(raw)) {
        this.#waiters.delete(waiter);
        waiter.resolve(raw);
      }
    }
  }

  #onResponse(frame: RawFrame): void {
    const pending = this.#pending.get(frame.id as string);
    if (pending === undefined) return; // droid's double response to add_user_message before a session, etc.
    this.#pending.delete(frame.id as string);
    const error = frame.error as { code?: number; message?: string; data?: unknown } | undefined;
    if (error !== undefined) pending.reject(new RawDroidError(error.message ?? 'error response', error.code ?? 0, error.data));
    else pending.resolve(frame.result);
  }

  async #onServerRequest(id: string, frame: RawFrame): Promise<void> {
    const method = String(frame.method);
    const answer = this.#options.onServerRequest ?? defaultServerAnswer;
    let reply: RawFrame;
    try {
      reply = rawResponse(id, { result: await answer(method, frame.params) });
    } catch (error) {
      const code = error instanceof RawDroidError && error.code !== 0 ? error.code : -32603;
      reply = rawResponse(id, { error: { code, message: error instanceof Error ? error.message : String(error) } });
    }
    if (this.#exit === undefined) this.writeLine(JSON.stringify(reply));
  }
}

// proceed_once for permissions, cancel for questions, "unknown method" for the rest.
function defaultServerAnswer(method: string): unknown {
  if (method === 'droid.request_permission') return { selectedOption: 'proceed_once' };
  if (method === 'droid.ask_user') return { cancelled: true, answers: [] };
  throw new RawDroidError(`raw client does not handle ${method}`, -32601);
}

/**
 * Writes the settings (if given) and spawns `droid exec` in stream-jsonrpc mode in its own
 * process group. Resolves once the process is running; rejects if it cannot be spawned.
 */
export async function startRawDroid(options: RawDroidOptions): Promise<RawDroidClient> {
  if (options.settings !== undefined) await writeRawDroidSettings(options.home, options.settings);
  const child = spawn(options.binary, rawDroidArgs(options.cwd, options.args), {
    cwd: options.cwd,
    env: rawDroidEnv(options.home, options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new RawDroidError(`cannot start ${options.binary}: ${error.message}`)));
  });
  return new RawDroidClient(child, options);
}
