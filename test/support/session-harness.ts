import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import type { Adapter, ChildChannel, ResolvedCli } from '../../core/adapter.js';
import type { RuntimeEvent, TurnOutcome } from '../../core/events/index.js';
import { liveChildCount, signalGroup } from '../../core/process/index.js';
import { SessionRunner, type NewSessionOptions, type SessionRuntime } from '../../core/session/index.js';
import { createFileStore, type FileStore } from '../../core/store/index.js';
import { droidAdapter } from '../../adapters/droid/index.js';
import { DroidConfigSchema, type DroidConfig } from '../../adapters/droid/config.js';
import { writeFakeDroidBinary, type FakeDroidBinaryOptions } from '../peers/fake-droid-binary.js';

/**
 * A SessionRuntime around the real droid adapter and a fake droid binary, for fault tests:
 * temp state dir and workspace, small deadlines, a decide() that allows everything, the live
 * events of every runner it opens, and every child the adapter launched (observed through a
 * wrapped `SessionIO.launch`, so tests can check that each pid is gone afterwards).
 */

/** Deadlines of the harness, in ms. Startup-bound ones stay generous: tsx needs a moment to boot. */
export interface HarnessTimeouts {
  /** SessionRuntime.runTimeoutMs; it also covers the lazy start of the child. */
  runTimeoutMs: number;
  /** SessionRuntime.interruptGraceMs and DroidConfig.interruptGraceMs (the interrupt request's deadline). */
  interruptGraceMs: number;
  /** SessionRuntime.stopGraceMs: each step of stopping a child. */
  stopGraceMs: number;
  /** SessionRuntime.drainFallbackMs (stdout after the exit) and DroidConfig.drainFallbackMs (the exit after stdout closed). */
  drainFallbackMs: number;
  /** DroidConfig.requestTimeoutMs. */
  requestTimeoutMs: number;
  /** DroidConfig.startupTimeoutMs. */
  startupTimeoutMs: number;
}

export const HARNESS_TIMEOUTS: HarnessTimeouts = {
  runTimeoutMs: 15_000,
  interruptGraceMs: 300,
  stopGraceMs: 300,
  drainFallbackMs: 300,
  requestTimeoutMs: 2_000,
  startupTimeoutMs: 10_000,
};

export interface SessionHarnessOptions extends Omit<FakeDroidBinaryOptions, 'recordPath'> {
  timeouts?: Partial<HarnessTimeouts>;
  /** `adapters.droid.fallback` (default: the schema's, `oneshot`). */
  fallback?: 'oneshot' | 'none';
}

/** One line the fake droid read on its stdin, parsed; `{ raw }` when it was not JSON. */
export type ReceivedFrame = Record<string, unknown> & { method?: string };

export interface SessionHarness {
  readonly runtime: SessionRuntime;
  readonly store: FileStore;
  readonly workspace: string;
  /** Live events (deltas included) of every runner opened through the harness, in order. */
  readonly events: RuntimeEvent[];
  /** Every child the adapter launched, in launch order. */
  readonly children: ChildChannel[];
  /** Creates a session (autonomy low unless given) and subscribes to its events. */
  create(options?: Partial<NewSessionOptions>): Promise<SessionRunner>;
  /** Resumes a recorded session in a new SessionRunner and subscribes to its events. */
  resume(sessionId: string): Promise<SessionRunner>;
  /** The frames every fake droid of this harness read on stdin, in order. */
  received(): Promise<ReceivedFrame[]>;
  /** The methods of the requests in `received()`. */
  receivedMethods(): Promise<string[]>;
  /** events.jsonl of a session, as the store reads it. */
  logged(sessionId: string): Promise<RuntimeEvent[]>;
  /** The pid of the only (or the given) launched child; fails the test when there is none. */
  pid(index?: number): number;
  /** Closes every runner, SIGKILLs any child group still there, removes the temp dirs. */
  dispose(): Promise<void>;
}

/** Builds a harness; the caller calls `dispose()` (typically in afterEach). */
export async function createSessionHarness(options: SessionHarnessOptions = {}): Promise<SessionHarness> {
  const { timeouts: overrides, fallback, ...fake } = options;
  const timeouts = { ...HARNESS_TIMEOUTS, ...overrides };
  const root = await mkdtemp(join(tmpdir(), 'ow-session-'));
  const [stateDir, workspace, binDir] = ['state', 'ws', 'bin'].map((name) => join(root, name)) as [string, string, string];
  await Promise.all([mkdir(workspace), mkdir(binDir)]);
  const recordPath = join(root, 'received.ndjson');
  const binaryPath = await writeFakeDroidBinary(binDir, { ...fake, recordPath });
  const store = await createFileStore(stateDir);
  const children: ChildChannel[] = [];
  const settled = new Set<ChildChannel>();
  const events: RuntimeEvent[] = [];
  const runners: SessionRunner[] = [];

  const adapterConfig: DroidConfig = DroidConfigSchema.parse({
    cli: { source: 'path', path: binaryPath },
    requestTimeoutMs: timeouts.requestTimeoutMs,
    startupTimeoutMs: timeouts.startupTimeoutMs,
    interruptGraceMs: timeouts.interruptGraceMs,
    drainFallbackMs: timeouts.drainFallbackMs,
    ...(fallback ? { fallback } : {}),
  });
  const cli: ResolvedCli = {
    source: 'path',
    binaryPath,
    version: '0.225.2',
    range: adapterConfig.cli.range,
    expected: { facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' }, qualifiedBy: 'table' },
  };
  // The real adapter, with its SessionIO.launch wrapped so every ChildChannel is observed.
  const adapter: Adapter<unknown> = {
    ...(droidAdapter as Adapter<unknown>),
    open: (config, spec, io) =>
      droidAdapter.open(config as DroidConfig, spec, {
        ...io,
        launch: async (launch, seed) => {
          const child = await io.launch(launch, seed);
          children.push(child);
          void child.exited.then(() => settled.add(child));
          return child;
        },
      }),
  };
  const runtime: SessionRuntime = {
    store,
    stateDir,
    adapter,
    adapterConfig,
    cli,
    secrets: [],
    decide: () => Promise.resolve({ decision: 'allow', by: 'policy' }),
    parentEnv: { PATH: process.env.PATH ?? '' },
    interruptGraceMs: timeouts.interruptGraceMs,
    runTimeoutMs: timeouts.runTimeoutMs,
    stopGraceMs: timeouts.stopGraceMs,
    drainFallbackMs: timeouts.drainFallbackMs,
  };

  const track = (runner: SessionRunner): SessionRunner => {
    runners.push(runner);
    runner.subscribe((event) => events.push(event));
    return runner;
  };

  const received = async (): Promise<ReceivedFrame[]> => {
    const text = await readFile(recordPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line): ReceivedFrame => {
        try {
          return JSON.parse(line) as ReceivedFrame;
        } catch {
          return { raw: line };
        }
      });
  };

  return {
    runtime,
    store,
    workspace,
    events,
    children,
    create: async (session = {}) => track(await SessionRunner.create(runtime, { workspace, autonomy: 'low', ...session })),
    resume: async (sessionId) => track(await SessionRunner.resume(runtime, sessionId)),
    received,
    receivedMethods: async () =>
      (await received()).flatMap((frame) => (frame.type === 'request' && typeof frame.method === 'string' ? [frame.method] : [])),
    logged: (sessionId) => store.readEvents(sessionId),
    pid: (index) => {
      const child = index === undefined ? children.at(-1) : children[index];
      expect(child?.pid, 'a launched child with a pid').toBeTypeOf('number');
      return child!.pid!;
    },
    dispose: async () => {
      try {
        await Promise.allSettled(runners.map((runner) => runner.close()));
      } finally {
        // A test that failed half-way must not leave a fake droid behind for the next one. Only
        // children that have not settled: a settled child's pid may already belong to another process.
        for (const child of children) if (child.pid !== undefined && !settled.has(child)) signalGroup(child.pid, 'SIGKILL');
        await Promise.allSettled(children.map((child) => child.exited));
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Registers an afterEach that disposes every harness made through the returned factory; call it
 * at the top level of a test file.
 */
export function useSessionHarnesses(): (options?: SessionHarnessOptions) => Promise<SessionHarness> {
  const made: SessionHarness[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((harness) => harness.dispose()));
  });
  return async (options) => {
    const harness = await createSessionHarness(options);
    made.push(harness);
    return harness;
  };
}

/** The errno `process.kill(target, 0)` fails with, or undefined while the target exists. */
export function probe(target: number): string | undefined {
  try {
    process.kill(target, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
}

/**
 * Asserts that the process `pid` is gone, that its process group is gone within 5 s (the group
 * of a tsx-run fake droid also holds tsx's esbuild service, which exits a moment after droid),
 * and that this process has no registered live child left.
 */
export async function expectNoProcessLeft(pid: number): Promise<void> {
  expect(probe(pid), `process ${pid}`).toBe('ESRCH');
  await expect.poll(() => probe(-pid), { message: `process group ${pid}`, timeout: 5_000, interval: 50 }).toBe('ESRCH');
  expect(liveChildCount()).toBe(0);
}

/** The events of `type` in `events`, typed. */
export function ofType<T extends RuntimeEvent['type']>(
  events: readonly RuntimeEvent[],
  type: T,
): Array<Extract<RuntimeEvent, { type: T }>> {
  return events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);
}

/**
 * Asserts that a turn's outcome has `status` and `reason` and is recorded everywhere: the last
 * run of the session record holds them with an `endedAt`, and events.jsonl has turn.started
 * and a turn.completed with the same outcome for that run. Resolves with the logged events.
 */
export async function expectTurnRecorded(
  harness: SessionHarness,
  sessionId: string,
  outcome: TurnOutcome,
  expected: { status: TurnOutcome['status']; reason: string },
): Promise<RuntimeEvent[]> {
  expect({ status: outcome.status, reason: outcome.reason }).toEqual(expected);
  const record = await harness.store.readSession(sessionId);
  const run = record.runs.at(-1);
  expect(run).toMatchObject({ status: expected.status, reason: expected.reason, text: outcome.text });
  expect(run?.endedAt).toBeTypeOf('string');
  const logged = await harness.logged(sessionId);
  const runId = run!.id;
  expect(ofType(logged, 'turn.started').filter((event) => event.runId === runId)).toHaveLength(1);
  const completed = ofType(logged, 'turn.completed').filter((event) => event.runId === runId);
  expect(completed).toHaveLength(1);
  expect(completed[0]!.outcome).toEqual(outcome);
  return logged;
}
