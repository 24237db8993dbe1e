import { PassThrough, type Readable, type Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import type { ChildExit, StopReason } from '../adapter.js';
import type { Redactor, StreamRedactor } from '../redact.js';
import { ByteTail } from './byte-tail.js';
import { registerChild, signalGroup, unregisterChild } from './child-registry.js';

/** Default grace of each stop step, in ms. */
export const DEFAULT_STOP_GRACE_MS = 5000;

/** Where core/process reports what it does; the default does nothing. Messages never carry secrets. */
export interface ProcessLogger {
  debug(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
}

const NULL_LOGGER: ProcessLogger = { debug() {}, warn() {} };

export interface StopOptions {
  /** Grace of each step (polite close + end of stdin, then SIGTERM), in ms; default 5000. */
  graceMs?: number;
  /** The adapter's protocol close, tried first; its failure is logged and the stop goes on. */
  politeStop?: () => Promise<void>;
}

/** A running child, as spawnChild returns it. */
export interface ChildHandle {
  readonly pid: number;
  /** The child's stdin. The caller writes protocol frames; `stop` ends it. */
  readonly stdin: Writable;
  /** The child's stdout, for protocol frames only. Ends when the child's stdout closes (or is cut by the drain fallback). */
  readonly stdout: Readable;
  /**
   * Settles (never rejects) once the process has exited AND its stdout and stderr have closed,
   * or `drainFallbackMs` after the exit when a grandchild still holds them (they are destroyed then).
   */
  readonly exited: Promise<ChildExit>;
  /** The last bytes of stderr (bounded), passed through the redactor. */
  stderrTail(): string;
  /**
   * Stops the child in steps: `politeStop` and end of stdin, wait `graceMs` for exit; SIGTERM to
   * the process group, wait `graceMs`; SIGKILL to the group (`forced: true`). Records `reason`
   * as `stopReason` unless the child had already exited on its own. Idempotent: concurrent and
   * later callers share the first stop. Resolves with `exited`.
   */
  stop(reason: StopReason, options?: StopOptions): Promise<ChildExit>;
}

interface SupervisorOptions {
  stderrTailBytes: number;
  drainFallbackMs: number;
  redactor: Redactor | undefined;
  logger: ProcessLogger | undefined;
}

/**
 * Watches one child process from spawn to settlement. One AbortController owns its timers
 * and is aborted once `exited` settles (cf. execa `methods/main-async.js`).
 */
export class ChildSupervisor implements ChildHandle {
  readonly exited: Promise<ChildExit>;
  readonly stdout = new PassThrough();
  readonly #subprocess: ChildProcess;
  readonly #pipes: { stdin: Writable; stdout: Readable; stderr: Readable };
  readonly #options: SupervisorOptions;
  readonly #logger: ProcessLogger;
  readonly #controller = new AbortController();
  readonly #tail: ByteTail;
  readonly #pid: number | undefined;
  readonly #rawExit: Promise<void>;
  #resolveRawExit!: () => void;
  #resolveExited!: (exit: ChildExit) => void;
  #exit: { exitCode: number | null; signal: string | null } | undefined;
  #stdoutClosed = false;
  #stderrClosed = false;
  #settled = false;
  #stopReason: StopReason | undefined;
  #forced = false;
  #stopping: Promise<ChildExit> | undefined;
  #stderrLog: { decoder: StringDecoder; redactor: StreamRedactor | undefined } | undefined;

  constructor(subprocess: ChildProcess, options: SupervisorOptions) {
    this.#subprocess = subprocess;
    const { stdin, stdout, stderr } = subprocess;
    // spawnChild asks for three pipes; Node creates them even when the spawn fails.
    if (!stdin || !stdout || !stderr) throw new Error('child stdio must be pipes');
    this.#pipes = { stdin, stdout, stderr };
    this.#options = options;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#tail = new ByteTail(options.stderrTailBytes);
    this.#pid = subprocess.pid;
    this.exited = new Promise((resolve) => (this.#resolveExited = resolve));
    this.#rawExit = new Promise((resolve) => (this.#resolveRawExit = resolve));
    if (options.logger) this.#stderrLog = { decoder: new StringDecoder('utf8'), redactor: options.redactor?.stream() };
    // Registered at once so a One Works exit between spawn and `start` still kills the group.
    if (this.#pid !== undefined) registerChild(this.#pid);
    this.#wire();
  }

  get pid(): number {
    // Defined once spawned, and the handle is only handed out then (see `start`).
    return this.#pid!;
  }

  get stdin(): Writable {
    return this.#pipes.stdin;
  }

  /** Called once the child has spawned; returns the handle. */
  start(): ChildHandle {
    if (this.#pid === undefined) throw new Error('spawned child has no pid');
    this.#logger.debug('child spawned', { pid: this.#pid });
    return this;
  }

  /** Called when the spawn failed: releases everything, settles nothing the caller will see. */
  abandon(): void {
    this.#settled = true;
    this.#controller.abort();
    if (this.#pid !== undefined) unregisterChild(this.#pid);
    this.stdout.destroy();
  }

  stderrTail(): string {
    const text = this.#tail.text();
    return this.#options.redactor ? this.#options.redactor.redact(text) : text;
  }

  stop(reason: StopReason, options: StopOptions = {}): Promise<ChildExit> {
    if (this.#stopping) return this.#stopping;
    if (this.#exit) return this.exited;
    this.#stopReason = reason;
    this.#stopping = this.#stopInSteps(options.graceMs ?? DEFAULT_STOP_GRACE_MS, options.politeStop).then(() => this.exited);
    return this.#stopping;
  }

  async #stopInSteps(graceMs: number, politeStop: (() => Promise<void>) | undefined): Promise<void> {
    this.#logger.debug('stopping child', { pid: this.#pid, reason: this.#stopReason, graceMs });
    // The polite phase (protocol close, then end of stdin) shares one grace window.
    const politeDeadline = this.#sleep(graceMs);
    if (politeStop) {
      const polite = Promise.resolve()
        .then(politeStop)
        .catch((error: unknown) => this.#logger.warn('polite stop failed', { pid: this.#pid, error: String(error) }));
      await Promise.race([polite, this.#rawExit, politeDeadline]);
    }
    if (this.#exit) return;
    this.#endStdin();
    await Promise.race([this.#rawExit, politeDeadline]);
    if (this.#exit) return;
    this.#signal('SIGTERM');
    await Promise.race([this.#rawExit, this.#sleep(graceMs)]);
    if (this.#exit) return;
    this.#forced = true;
    this.#signal('SIGKILL');
  }

  // Attaches every listener; runs synchronously right after spawn() returns.
  #wire(): void {
    const { stdout, stderr, stdin } = this.#pipes;
    stdout.pipe(this.stdout);
    stdout.once('close', () => {
      this.#stdoutClosed = true;
      // A destroyed pipe never ends its destination; end it so readers see EOF.
      if (!this.stdout.writableEnded) this.stdout.end();
      this.#maybeSettle();
    });
    stderr.on('data', (chunk: Buffer) => this.#onStderr(chunk));
    stderr.once('close', () => {
      this.#stderrClosed = true;
      this.#maybeSettle();
    });
    for (const [name, stream] of [
      ['stdin', stdin],
      ['stdout', stdout],
      ['stderr', stderr],
    ] as const) {
      stream.on('error', (error: Error) => this.#logger.debug(`child ${name} error`, { pid: this.#pid, error: error.message }));
    }
    this.#subprocess.on('error', (error: Error) => this.#logger.debug('child error', { pid: this.#pid, error: error.message }));
    this.#subprocess.once('exit', (exitCode: number | null, signal: NodeJS.Signals | null) => this.#onExit(exitCode, signal));
  }

  #onStderr(chunk: Buffer): void {
    this.#tail.push(chunk);
    if (!this.#stderrLog) return;
    const text = this.#stderrLog.decoder.write(chunk);
    const safe = this.#stderrLog.redactor ? this.#stderrLog.redactor.push(text) : text;
    if (safe) this.#logger.debug('child stderr', { pid: this.#pid, text: safe });
  }

  #onExit(exitCode: number | null, signal: NodeJS.Signals | null): void {
    if (this.#settled) return;
    this.#exit = { exitCode, signal };
    this.#logger.debug('child exited', { pid: this.#pid, exitCode, signal });
    this.#resolveRawExit();
    // Reap grandchildren left in the group; the leader is gone, so ESRCH is the usual answer.
    this.#signal('SIGKILL');
    void this.#sleep(this.#options.drainFallbackMs).then(() => this.#drainFallback());
    this.#maybeSettle();
  }

  // A process outside the group (it called setsid) still holds stdout or stderr: stop waiting for it.
  #drainFallback(): void {
    if (this.#settled) return;
    this.#logger.warn('child output still open after exit; closing it', {
      pid: this.#pid,
      drainFallbackMs: this.#options.drainFallbackMs,
    });
    this.#pipes.stdout.destroy();
    this.#pipes.stderr.destroy();
    if (!this.stdout.writableEnded) this.stdout.end();
    this.#stdoutClosed = true;
    this.#stderrClosed = true;
    this.#maybeSettle();
  }

  #maybeSettle(): void {
    if (this.#settled || !this.#exit || !this.#stdoutClosed || !this.#stderrClosed) return;
    this.#settled = true;
    try {
      this.#flushStderrLog();
    } finally {
      this.#controller.abort();
      if (this.#pid !== undefined) unregisterChild(this.#pid);
      this.#resolveExited({ ...this.#exit, stopReason: this.#stopReason, forced: this.#forced });
    }
  }

  #flushStderrLog(): void {
    if (!this.#stderrLog) return;
    const rest = this.#stderrLog.decoder.end();
    const redactor = this.#stderrLog.redactor;
    const safe = redactor ? redactor.push(rest) + redactor.flush() : rest;
    if (safe) this.#logger.debug('child stderr', { pid: this.#pid, text: safe });
  }

  #endStdin(): void {
    const stdin = this.#pipes.stdin;
    if (!stdin.destroyed && !stdin.writableEnded) stdin.end();
  }

  #signal(signal: NodeJS.Signals): void {
    if (this.#pid === undefined) return;
    try {
      signalGroup(this.#pid, signal);
    } catch (error) {
      this.#logger.warn('could not signal child group', { pid: this.#pid, signal, error: String(error) });
    }
  }

  // A timer owned by the child's AbortController: resolves after `ms`, or at once when the child settles.
  #sleep(ms: number): Promise<void> {
    return delay(ms, undefined, { signal: this.#controller.signal }).catch(() => undefined);
  }
}
