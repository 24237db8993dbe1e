import { rm } from 'node:fs/promises';
import type { RuntimeEvent } from '../events/index.js';
import type { PresentationEnv } from '../process/index.js';
import type { SessionRunner } from '../session/index.js';
import { sessionDir, type SessionRecord } from '../store/index.js';
import type { EffectiveSettings } from './types.js';

/** What prewarmed agents are started for: the adapter, workspace and settings of the most recent new session. */
export interface PrewarmTarget {
  adapter: string;
  workspace: string;
  settings: EffectiveSettings;
  /** The client's presentation variables the agent starts with (undefined: the server's own). */
  presentation?: PresentationEnv | undefined;
}

/** Why a prewarmed agent was closed without a session taking it. */
export type PrewarmCloseReason = 'unused' | 'replaced' | 'config_changed' | 'shutdown' | 'start_failed';

/** What a prewarmed agent wrote while no session owned it: its record and events, kept in memory. */
export interface StagedSession {
  record: SessionRecord;
  events: RuntimeEvent[];
}

/** A prewarmed agent handed to a new session. */
export interface ClaimedAgent {
  id: string;
  runner: SessionRunner;
  /** The facts its start recorded (CLI version, native session id), for the session's record. */
  record: SessionRecord;
}

/**
 * An agent started for a new session while createSession checks and records it (see
 * `PrewarmPool.startEarly`): its writes are staged until the session takes it (`handOver`) or it
 * is discarded (`discard`).
 */
export interface EarlyAgent {
  id: string;
  /** Its runner, opened for the staged record and starting its agent; undefined when it could not be opened or cannot start ahead. */
  opened: Promise<SessionRunner | undefined>;
  /** What its start recorded so far (CLI version, native session id). */
  staged: StagedSession;
}

/** What the pool needs from the orchestrator. */
export interface PrewarmDeps {
  /** Agents kept prewarmed (0: none). */
  count: number;
  /** How long a prewarmed agent waits for a session, in ms; then it is closed (`unused`). */
  windowMs: number;
  stateDir: string;
  /** A fresh session id no session and no other prewarmed agent has. */
  newId(): Promise<string>;
  /** Opens a runner for `staged` (whose writes the pool keeps until a session claims it). */
  open(target: PrewarmTarget, staged: StagedSession): Promise<SessionRunner>;
  /** Where each prewarmed agent's start and close are recorded (the server's log). */
  log?: ((message: string) => void) | undefined;
}

interface Entry {
  id: string;
  key: string;
  target: PrewarmTarget;
  staged: StagedSession;
  runner: SessionRunner | undefined;
  /** starting → ready → (claimed | closing); claimed entries are the new session's once handed over. */
  state: 'starting' | 'ready' | 'claimed' | 'closing';
  closeReason: PrewarmCloseReason | undefined;
  /** Resolves true once the agent is up and negotiated, false when its start failed or it was closed first. */
  started: Promise<boolean>;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Agents started ahead of the sessions that will use them (`orchestrator.prewarm: N`): after a
 * new session's turn, N agents are kept spawned and negotiated for its (adapter, workspace,
 * settings), so that the next new session there takes one instead of spawning. A prewarmed
 * agent has its session id already (its HOME is that session's); until a session claims it,
 * what it records (the record with its native session id, `session.started`) is staged in
 * memory, never in the store, so no listing sees it. One not claimed within `windowMs` is
 * closed and its session directory removed; every start and close goes to `log`.
 */
export class PrewarmPool {
  readonly #deps: PrewarmDeps;
  readonly #entries = new Map<string, Entry>();
  readonly #work = new Set<Promise<void>>();
  /** Adapters whose agents cannot start ahead of a prompt: never tried again. */
  readonly #unable = new Set<string>();
  #stopped = false;
  /** The key of the target agents are prewarmed for now. */
  #wanted: string | undefined;

  constructor(deps: PrewarmDeps) {
    this.#deps = deps;
  }

  /** True when agents are prewarmed at all (a count and a window). */
  get enabled(): boolean {
    return this.#deps.count > 0 && this.#deps.windowMs > 0 && !this.#stopped;
  }

  /** The staged writes of a prewarmed agent no session has taken yet; undefined for any other id. */
  staged(id: string): StagedSession | undefined {
    return this.#entries.get(id)?.staged;
  }

  /** True while `id` belongs to a prewarmed agent (a new session must not take it). */
  has(id: string): boolean {
    return this.#entries.has(id);
  }

  /** The prewarmed agents now: session id, agent pid (once started) and state. */
  list(): Array<{ sessionId: string; pid: number | undefined; state: Entry['state'] }> {
    return [...this.#entries.values()].map((e) => ({ sessionId: e.id, pid: e.runner?.agentPid(), state: e.state }));
  }

  /**
   * Keeps `count` agents for `target`: those prewarmed for another target are closed
   * (`replaced`), missing ones are started in the background.
   */
  want(target: PrewarmTarget): void {
    if (!this.enabled || this.#unable.has(target.adapter)) return;
    const key = keyOf(target);
    this.#wanted = key;
    for (const entry of this.#entries.values()) if (entry.key !== key && entry.state !== 'claimed') this.#close(entry, 'replaced');
    const have = [...this.#entries.values()].filter((e) => e.key === key && (e.state === 'starting' || e.state === 'ready')).length;
    for (let i = have; i < this.#deps.count; i += 1) this.#track(this.#startOne(target, key));
  }

  /**
   * A prewarmed agent for `target` (a ready one first, else one still starting, awaited), now
   * the caller's: it is no longer closed by its window. Undefined when none matches or its start
   * failed. Its writes stay staged until `handOver`.
   */
  async claim(target: PrewarmTarget): Promise<ClaimedAgent | undefined> {
    const key = keyOf(target);
    const matching = [...this.#entries.values()].filter((e) => e.key === key);
    const entry = matching.find((e) => e.state === 'ready') ?? matching.find((e) => e.state === 'starting');
    if (!entry) return undefined;
    entry.state = 'claimed';
    clearTimeout(entry.timer);
    if (!(await entry.started) || !entry.runner) return undefined;
    return { id: entry.id, runner: entry.runner, record: entry.staged.record };
  }

  /**
   * The claimed (or early) agent's session now has its book: its writes go there, and what it
   * staged until now is returned for it (empty for an unknown id).
   */
  handOver(id: string): StagedSession | undefined {
    const entry = this.#entries.get(id);
    this.#entries.delete(id);
    return entry?.staged;
  }

  /**
   * Starts an agent at once for the new session `record` describes (an early start: its spawn
   * and handshake overlap createSession's catalog check and record writes). Claimed from the
   * start: no window, replacement or drain closes it; the caller hands it over (`handOver`) once
   * the session is accepted, else discards it (`discard`). Nothing of it is stored before.
   * Adapters whose agents cannot start ahead of a prompt are remembered and get none.
   */
  startEarly(target: PrewarmTarget, record: SessionRecord): EarlyAgent | undefined {
    if (this.#unable.has(target.adapter) || this.#entries.has(record.id)) return undefined;
    const entry: Entry = {
      id: record.id,
      key: keyOf(target),
      target,
      staged: { record, events: [] },
      runner: undefined,
      state: 'claimed',
      closeReason: undefined,
      started: Promise.resolve(false),
      timer: undefined,
    };
    this.#entries.set(record.id, entry);
    const opened = this.#deps.open(target, entry.staged).then(
      (runner) => {
        entry.runner = runner;
        if (!runner.canPrewarm) {
          this.#unable.add(target.adapter);
          return undefined;
        }
        runner.startAhead();
        return runner;
      },
      () => undefined,
    );
    return { id: record.id, opened, staged: entry.staged };
  }

  /**
   * Stops an early agent no session took (a check refused the session) and removes its session
   * directory (its HOME), so that nothing of it remains; resolves once it is gone.
   */
  async discard(id: string, opened?: Promise<unknown>): Promise<void> {
    const entry = this.#entries.get(id);
    if (!entry) return;
    await opened;
    try {
      await entry.runner?.close('not_accepted');
    } catch {
      // Closing stops the child whatever the close event's fate; the directory goes below.
    }
    await rm(sessionDir(this.#deps.stateDir, id), { recursive: true, force: true }).catch(() => undefined);
    this.#entries.delete(id);
  }

  /**
   * Closes every prewarmed agent no session has claimed with `reason` and resolves once they
   * are gone; with `stop`, no agent is prewarmed from now on (a stale configuration, a shutdown).
   */
  async drain(reason: PrewarmCloseReason, options: { stop?: boolean } = {}): Promise<void> {
    if (options.stop) this.#stopped = true;
    for (const entry of this.#entries.values()) if (entry.state !== 'claimed') this.#close(entry, reason);
    while (this.#work.size > 0) await Promise.all([...this.#work]);
  }

  async #startOne(target: PrewarmTarget, key: string): Promise<void> {
    let settle!: (ok: boolean) => void;
    const started = new Promise<boolean>((resolve) => (settle = resolve));
    const id = await this.#deps.newId();
    // Stopped or retargeted while the id was chosen: nothing to start.
    if (!this.enabled || this.#wanted !== key) return;
    const now = new Date().toISOString();
    const record: SessionRecord = {
      id,
      adapter: target.adapter,
      workspace: target.workspace,
      createdAt: now,
      updatedAt: now,
      status: 'idle',
      runs: [],
      pending: target.settings,
    };
    const entry: Entry = {
      id,
      key,
      target,
      staged: { record, events: [] },
      runner: undefined,
      state: 'starting',
      closeReason: undefined,
      started,
      timer: undefined,
    };
    this.#entries.set(id, entry);
    try {
      entry.runner = await this.#deps.open(target, entry.staged);
      if (!entry.runner.canPrewarm) {
        this.#unable.add(target.adapter);
        throw new Error(`the ${target.adapter} adapter cannot start an agent ahead of a prompt; it is not prewarmed`);
      }
      if (entry.state === 'starting') await entry.runner.start();
    } catch (error) {
      this.#deps.log?.(
        `prewarmed agent ${id} (${target.adapter}) could not start: ${error instanceof Error ? error.message : String(error)}`,
      );
      settle(false);
      await this.#dispose(entry, 'start_failed');
      return;
    }
    const state = entry.state as Entry['state'];
    if (state === 'closing') {
      settle(false);
      await this.#dispose(entry, entry.closeReason ?? 'unused');
      return;
    }
    this.#deps.log?.(`prewarmed agent ${id} (${target.adapter}, pid ${entry.runner.agentPid() ?? '?'}) ready in ${target.workspace}`);
    if (state === 'starting') {
      entry.state = 'ready';
      entry.timer = setTimeout(() => this.#close(entry, 'unused'), this.#deps.windowMs);
      entry.timer.unref();
    }
    settle(true);
  }

  #close(entry: Entry, reason: PrewarmCloseReason): void {
    if (entry.state === 'closing' || entry.state === 'claimed') return;
    clearTimeout(entry.timer);
    const wasStarting = entry.state === 'starting';
    entry.state = 'closing';
    entry.closeReason = reason;
    // One still starting is closed by its start, once the adapter is done with it.
    if (!wasStarting) this.#track(this.#dispose(entry, reason));
  }

  // Stops the agent, forgets its staged writes and removes its session directory (its HOME).
  async #dispose(entry: Entry, reason: PrewarmCloseReason): Promise<void> {
    const pid = entry.runner?.agentPid();
    try {
      await entry.runner?.close(`prewarm_${reason}`);
    } catch {
      // Closing stops the child whatever the close event's fate; the directory goes below.
    }
    await rm(sessionDir(this.#deps.stateDir, entry.id), { recursive: true, force: true }).catch(() => undefined);
    if (reason !== 'start_failed') this.#deps.log?.(`prewarmed agent ${entry.id} (pid ${pid ?? '?'}) closed: ${reason}`);
    this.#entries.delete(entry.id);
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch(() => undefined).finally(() => this.#work.delete(tracked));
    this.#work.add(tracked);
  }
}

/** The identity of a prewarm target: equal keys, interchangeable agents. */
export function keyOf(target: PrewarmTarget): string {
  const { model, effort, autonomy } = target.settings;
  const p = target.presentation;
  return JSON.stringify([target.adapter, target.workspace, model ?? null, effort ?? null, autonomy, p?.TERM, p?.COLORTERM, p?.NO_COLOR]);
}
