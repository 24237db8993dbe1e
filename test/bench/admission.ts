/**
 * Admission bench: how fast the orchestrator's admission core drains 1,000 queued turns against
 * a scripted fake adapter that completes every turn at once, next to a baseline in the same run
 * (the same loop over a plain FIFO array with no session or lock checks), printed as a ratio;
 * and the heap that admission and the request-key registry keep per idle session. Figures are
 * printed with the machine's, never asserted. `benchAdmission()` is called by test/bench/run.ts;
 * `node --import tsx test/bench/admission.ts` runs it alone.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { z } from 'zod';
import { createAdmission, RequestKeyRegistry, type TurnRequest } from '../../core/orchestrator/index.js';
import { median } from './support.js';

export interface AdmissionBenchOptions {
  turns?: number;
  sessions?: number;
  trees?: number;
  maxConcurrentRuns?: number;
  /** Untimed rounds of each loop first, so both are measured after the JIT has optimised them. */
  warmupRounds?: number;
  /** Timed rounds of each loop; the median is reported. */
  rounds?: number;
  /** Sessions created for the memory figures. */
  idleSessions?: number;
  write?: (text: string) => void;
}

export interface AdmissionBenchResult {
  turns: number;
  /** Every turn started exactly once in every admission round. */
  allStartedOnce: boolean;
  admissionTurnsPerSecond: number;
  baselineTurnsPerSecond: number;
  /** Admission time over baseline time (how many times slower). */
  ratio: number;
  memory: { gc: 'exposed' | 'enabled at runtime'; idleSessionBytes: number; queuedTurnBytes: number; requestKeyBytes: number };
  machine: { cpu: string; cores: number; totalMemoryBytes: number; loadAverage: number; node: string; platform: string };
}

// The scripted fake adapter: every prompt settles at once with a completed outcome.
const fakeAdapter = {
  prompt: (turn: TurnRequest) => Promise.resolve({ status: 'completed' as const, text: `done ${turn.turnId}` }),
};

/** Runs the bench and prints its figures through `write` (default: stdout). */
export async function benchAdmission(options: AdmissionBenchOptions = {}): Promise<AdmissionBenchResult> {
  const {
    turns = 1000,
    sessions = 200,
    trees = 20,
    maxConcurrentRuns = 4,
    warmupRounds = 20,
    rounds = 15,
    idleSessions = 10_000,
  } = options;
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  const requests = workload(turns, sessions, trees);
  for (let r = 0; r < warmupRounds; r++) {
    await drainAdmission(requests, maxConcurrentRuns);
    await drainBaseline(requests, maxConcurrentRuns);
  }
  const admissionMs: number[] = [];
  const baselineMs: number[] = [];
  let allStartedOnce = true;
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    const order = await drainAdmission(requests, maxConcurrentRuns);
    admissionMs.push(performance.now() - t0);
    allStartedOnce &&= order.length === turns && new Set(order).size === turns;
    t0 = performance.now();
    await drainBaseline(requests, maxConcurrentRuns);
    baselineMs.push(performance.now() - t0);
  }
  const adm = median(admissionMs);
  const base = median(baselineMs);
  const memory = measureMemory(idleSessions);
  const cpus = os.cpus();
  const result: AdmissionBenchResult = {
    turns,
    allStartedOnce,
    admissionTurnsPerSecond: (turns / adm) * 1000,
    baselineTurnsPerSecond: (turns / base) * 1000,
    ratio: adm / base,
    memory: { ...memory, requestKeyBytes: await requestKeyBytes(idleSessions) },
    machine: {
      cpu: cpus[0]?.model ?? 'unknown',
      cores: cpus.length,
      totalMemoryBytes: os.totalmem(),
      loadAverage: os.loadavg()[0]!,
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
  };
  write(formatResult(result, { sessions, trees, maxConcurrentRuns, rounds, idleSessions }));
  return result;
}

// Turn i belongs to session i % sessions; a session keeps one tree and one autonomy. A quarter
// of the trees are children of other trees, so ancestor/descendant locks are exercised.
function workload(turns: number, sessions: number, trees: number): TurnRequest[] {
  const paths = Array.from({ length: trees }, (_, t) => (t % 4 === 3 ? `/bench/tree${t - 1}/child` : `/bench/tree${t}`));
  return Array.from({ length: turns }, (_, i) => {
    const s = i % sessions;
    return { turnId: `turn-${i}`, sessionId: `session-${s}`, workspace: paths[s % trees]!, writer: s % 3 !== 0 };
  });
}

// The service loop: enqueue everything, start what admission allows, and on each completion
// release the turn and ask admission again. Returns the turn ids in start order.
async function drainAdmission(requests: TurnRequest[], maxConcurrentRuns: number): Promise<string[]> {
  const admission = createAdmission({ maxConcurrentRuns, maxQueuedTotal: requests.length, maxQueuedPerSession: requests.length });
  for (const request of requests) admission.enqueue(request);
  const started: string[] = [];
  const running: TurnRequest[] = [];
  const start = (batch: TurnRequest[]) => {
    for (const turn of batch) started.push(turn.turnId);
    running.push(...batch);
  };
  start(admission.next());
  for (let turn = running.shift(); turn; turn = running.shift()) {
    await fakeAdapter.prompt(turn);
    admission.release(turn.turnId);
    start(admission.next());
  }
  return started;
}

// The same loop over a plain FIFO array: run slots only, no sessions, no locks.
async function drainBaseline(requests: TurnRequest[], maxConcurrentRuns: number): Promise<void> {
  const queue = [...requests];
  const running: TurnRequest[] = [];
  const fill = () => {
    while (running.length < maxConcurrentRuns && queue.length > 0) running.push(queue.shift()!);
  };
  fill();
  for (let turn = running.shift(); turn; turn = running.shift()) {
    await fakeAdapter.prompt(turn);
    fill();
  }
}

type Gc = () => void;

// A full collection before each heap reading; `--expose-gc` is turned on at runtime when absent.
function collector(): { gc: Gc; how: 'exposed' | 'enabled at runtime' } {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return { gc: exposed, how: 'exposed' };
  setFlagsFromString('--expose-gc');
  return { gc: runInNewContext('gc') as Gc, how: 'enabled at runtime' };
}

function heapAfterGc(gc: Gc): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

// Heap kept per session by admission once its turn is done (idle), and per waiting turn.
function measureMemory(n: number): { gc: 'exposed' | 'enabled at runtime'; idleSessionBytes: number; queuedTurnBytes: number } {
  const { gc, how } = collector();
  const limits = { maxConcurrentRuns: 1, maxQueuedTotal: n, maxQueuedPerSession: n };
  let before = heapAfterGc(gc);
  const idle = createAdmission(limits);
  for (let i = 0; i < n; i++) {
    idle.enqueue({ turnId: `idle-turn-${i}`, sessionId: `idle-session-${i}`, workspace: `/bench/idle/${i % 50}`, writer: true });
    for (const turn of idle.next()) idle.release(turn.turnId);
  }
  const idleSessionBytes = (heapAfterGc(gc) - before) / n;
  before = heapAfterGc(gc);
  const queued = createAdmission(limits);
  for (let i = 0; i < n; i++) {
    queued.enqueue({ turnId: `queued-turn-${i}`, sessionId: `queued-session-${i}`, workspace: `/bench/queued/${i % 50}`, writer: true });
  }
  const queuedTurnBytes = (heapAfterGc(gc) - before) / n;
  // Both stay reachable until measured; an idle session must leave nothing behind in admission.
  if (idle.snapshot().sessions.length !== 0 || queued.snapshot().queued.length !== n)
    throw new Error('bench admission state is not as expected');
  return { gc: how, idleSessionBytes, queuedTurnBytes };
}

// Heap kept per session by the request-key registry: one `create` key each (persistence excluded).
async function requestKeyBytes(n: number): Promise<number> {
  const { gc } = collector();
  const registry = await RequestKeyRegistry.open(
    { load: () => ({}), save: () => undefined, remove: () => undefined },
    z.strictObject({ sessionId: z.string() }),
  );
  const before = heapAfterGc(gc);
  for (let i = 0; i < n; i++) {
    await registry.claim(`create-key-${i}`, { op: 'create', workspace: `/bench/ws/${i % 50}`, autonomy: 'low' }, () => ({
      sessionId: `session-${i}`,
    }));
  }
  const bytes = (heapAfterGc(gc) - before) / n;
  if (registry.lookup('create-key-0') === undefined) throw new Error('bench registry lost a key');
  return bytes;
}

function formatResult(
  r: AdmissionBenchResult,
  o: { sessions: number; trees: number; maxConcurrentRuns: number; rounds: number; idleSessions: number },
): string {
  const m = r.machine;
  return [
    `admission: ${r.turns} queued turns over ${o.sessions} sessions / ${o.trees} trees, maxConcurrentRuns ${o.maxConcurrentRuns}, median of ${o.rounds} rounds after warm-up`,
    `  admission ${Math.round(r.admissionTurnsPerSecond)} turns/s  plain FIFO baseline ${Math.round(r.baselineTurnsPerSecond)} turns/s  ratio ${r.ratio.toFixed(2)}x${r.allStartedOnce ? '' : '  (NOT every turn started exactly once)'}`,
    `memory per idle session (${o.idleSessions} sessions, gc ${r.memory.gc}): admission ${r.memory.idleSessionBytes.toFixed(1)} B  request key ${r.memory.requestKeyBytes.toFixed(1)} B;  per queued turn ${r.memory.queuedTurnBytes.toFixed(1)} B`,
    `machine: ${m.cpu} x${m.cores}, ${(m.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, load average ${m.loadAverage.toFixed(2)}, ${m.platform}, node ${m.node}`,
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await benchAdmission();
