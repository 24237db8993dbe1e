import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { liveChildCount } from '../../../core/process/index.js';
import { createOrchestrator, type Orchestrator, type OrchestratorDeps, type OrchestratorLimits } from '../../../core/orchestrator/index.js';
import type { SessionRuntime } from '../../../core/session/index.js';
import { createFakeAdapter, FAKE_RESOLVED_CLI, type FakeAdapterOptions, type FakeAgent } from '../../support/fake-adapter.js';
import { createSessionHarness, probe, type SessionHarness, type SessionHarnessOptions } from '../../support/session-harness.js';

/**
 * An in-process orchestrator over the in-memory fake adapter (`fake` option), or else over the
 * fake droid binary through the session harness's runtime (for what needs a real child process):
 * workspaces are directories under the harness workspace (the one approved root), every event
 * of every session is collected in order, and `dispose` shuts the orchestrator down and checks
 * that every child it launched is gone.
 */
export interface OrchestratorHarness {
  readonly orchestrator: Orchestrator;
  /** The deps the orchestrator was made with, to start another one over the same state. */
  readonly deps: OrchestratorDeps;
  readonly session: SessionHarness;
  /** The fake adapter's log when the harness runs on it (`fake` option). */
  readonly fake: FakeAgent | undefined;
  /** The approved root; `dir(name)` creates a workspace below it. */
  readonly root: string;
  /** Every event of every subscribed session, in arrival order. */
  readonly events: RuntimeEvent[];
  /** Creates (if needed) a directory below the approved root and returns its path. */
  dir(name: string): Promise<string>;
  /** Subscribes `events` to a session. */
  watch(sessionId: string): void;
  /** Resolves once `check()` holds, testing every 20 ms (no timing assertion: a test timeout fails it). */
  until(check: () => boolean | Promise<boolean>): Promise<void>;
  /** Resolves once the session's run is recorded as running (or further). */
  running(sessionId: string, runId: string): Promise<void>;
  /** Shuts down and asserts that no child of this harness is left. */
  dispose(): Promise<void>;
}

export const TEST_LIMITS: OrchestratorLimits = {
  maxConcurrentRuns: 4,
  maxQueuedTotal: 16,
  maxQueuedPerSession: 8,
  cancelGraceMs: 300,
  runTimeoutMs: 15_000,
};

export interface OrchestratorHarnessOptions extends SessionHarnessOptions {
  /**
   * Runs the sessions on the in-memory fake adapter (adapter name `fake`) instead of the fake
   * droid, for tests that only need an adapter; the store and workspace stay the harness's.
   */
  fake?: FakeAdapterOptions;
  /** Secrets the runtime registers with each session's redactor (fake adapter runs only). */
  secrets?: string[];
  limits?: Partial<OrchestratorLimits>;
  /** Replaces deps callbacks, e.g. `defaultsFor` or a fake catalog as `modelsFor`. */
  deps?: Partial<
    Pick<
      OrchestratorDeps,
      | 'defaultsFor'
      | 'modelsFor'
      | 'catalogIsAdvisory'
      | 'adapterNames'
      | 'catalogDeadlineMs'
      | 'asks'
      | 'measureRss'
      | 'log'
      | 'defaultAdapter'
      | 'intentWindowMs'
    >
  >;
}

/** Builds a harness; prefer `useOrchestratorHarnesses` so it is disposed after each test. */
export async function createOrchestratorHarness(options: OrchestratorHarnessOptions = {}): Promise<OrchestratorHarness> {
  const { limits, deps: overrides, fake: fakeOptions, secrets, ...sessionOptions } = options;
  const session = await createSessionHarness(sessionOptions);
  const fake = fakeOptions ? createFakeAdapter(fakeOptions) : undefined;
  const runtime: SessionRuntime = fake
    ? {
        ...session.runtime,
        adapter: fake.adapter,
        adapterConfig: fake.adapter.configSchema.parse({}),
        cli: FAKE_RESOLVED_CLI,
        ...(secrets ? { secrets } : {}),
      }
    : session.runtime;
  const adapterName = runtime.adapter.name;
  const events: RuntimeEvent[] = [];
  const deps: OrchestratorDeps = {
    store: session.store,
    stateDir: session.runtime.stateDir,
    limits: { ...TEST_LIMITS, ...limits },
    approvedRoots: [session.workspace],
    defaultsFor: (adapter) => {
      if (adapter !== adapterName) throw new Error(`unknown adapter ${adapter}`);
      return { autonomy: 'low' };
    },
    runtimeFor: () => Promise.resolve(runtime),
    ...overrides,
  };
  const orchestrator = await createOrchestrator(deps);
  const until = async (check: () => boolean | Promise<boolean>): Promise<void> => {
    while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  let disposed = false;
  return {
    orchestrator,
    deps,
    session,
    fake,
    root: session.workspace,
    events,
    dir: async (name) => {
      const dir = join(session.workspace, name);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    watch: (sessionId) => {
      orchestrator.subscribe(sessionId, (event) => events.push(event));
    },
    until,
    running: (sessionId, runId) =>
      until(async () => {
        const run = (await session.store.readSession(sessionId)).runs.find((r) => r.id === runId);
        return run !== undefined && run.status !== 'queued';
      }),
    dispose: async () => {
      if (disposed) return;
      disposed = true;
      try {
        await orchestrator.shutdown();
        for (const child of session.children) {
          await child.exited;
          expect(probe(child.pid!), `child ${child.pid}`).toBe('ESRCH');
          // The fake droid's group also holds tsx's esbuild service, which exits on its own EOF
          // (or the sweep's SIGKILL) a moment after droid; a killed member stays visible until reaped.
          await expect
            .poll(() => probe(-child.pid!), { message: `process group ${child.pid}`, timeout: 5_000, interval: 50 })
            .toBe('ESRCH');
        }
        expect(liveChildCount()).toBe(0);
      } finally {
        await session.dispose();
      }
    },
  };
}

/** Registers an afterEach that disposes every harness made through the returned factory. */
export function useOrchestratorHarnesses(): (options?: OrchestratorHarnessOptions) => Promise<OrchestratorHarness> {
  const made: OrchestratorHarness[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((harness) => harness.dispose()));
  });
  return async (options) => {
    const harness = await createOrchestratorHarness(options);
    made.push(harness);
    return harness;
  };
}
