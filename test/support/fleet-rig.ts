import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { stringify } from 'yaml';
import { awaitAccepted, submitCreate, submitSend } from '../../core/fleet/fleet-queue.js';
import type { TurnHandle } from '../../core/orchestrator/index.js';
import { createPostgresStore, type PostgresStore } from '../../core/store/postgres-store.js';
import { sql, startTestPostgres, type TestPostgres } from './embedded-postgres.js';
import { ONE_WORKS_BIN } from './one-works-cli.js';
import { findProcesses, killQuietly, waitForExit } from './rig-processes.js';

/**
 * A fleet on this machine for tests: one real PostgreSQL (embedded-postgres), worker
 * PROCESSES (`one-works serve --worker NAME`, each with its own config and state directory),
 * and a tiny process runner (`process:tiny`, test/peers/fleet-runner.mjs) as the agent, which
 * writes what it ran, and when, to a ledger file. Turns are submitted with fleet-queue's API.
 * `dispose` stops the workers (SIGTERM, then SIGKILL), kills anything left under the rig's
 * root, stops the database and removes every file.
 */

const RUNNER = fileURLToPath(new URL('../peers/fleet-runner.mjs', import.meta.url));
/** The adapter the rig's workers run turns with. */
export const FLEET_ADAPTER = 'process:tiny';

export interface WorkerOptions {
  /** Approved workspace roots (default: the rig's shared workspace). */
  approved?: string[];
  maxConcurrentRuns: number;
  fleetMaxConcurrentRuns?: number;
  workerLeaseMs?: number;
  sharedHomes?: boolean;
  /** The worker's state directory (default: its own under the rig's root); the same for two workers: shared storage. */
  stateDir?: string;
}

/** A running `serve --worker` process. */
export interface WorkerProcess {
  name: string;
  pid: number;
  stateDir: string;
  /** What it printed on stderr so far. */
  stderr(): string;
  /** Resolves with its exit (code or signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** One line of the runner's ledger. */
export interface LedgerLine {
  token: string;
  what: 'start' | 'end' | 'interrupted';
  at: number;
  pid: number;
}

export class FleetRig {
  readonly root: string;
  readonly url: string;
  /** A workspace every worker approves by default. */
  readonly workspace: string;
  readonly ledgerPath: string;
  /** The rig's PostgreSQL server (a test restarts it with stop/start). */
  readonly server: TestPostgres;
  readonly #workers = new Set<{ child: ChildProcess; exited: Promise<unknown> }>();
  readonly #stores: PostgresStore[] = [];

  private constructor(server: TestPostgres, root: string, url: string) {
    this.server = server;
    this.root = root;
    this.url = url;
    this.workspace = join(root, 'ws');
    this.ledgerPath = join(root, 'ledger.txt');
  }

  /** A rig on `server` with a database of its own. */
  static async create(server: TestPostgres): Promise<FleetRig> {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-fleet-')));
    const rig = new FleetRig(server, root, await server.createDatabase());
    await mkdir(rig.workspace);
    await writeFile(rig.ledgerPath, '');
    return rig;
  }

  /** Starts `one-works serve --worker NAME` and resolves once it serves. */
  async startWorker(name: string, options: WorkerOptions): Promise<WorkerProcess> {
    const dir = join(this.root, name);
    const stateDir = options.stateDir ?? join(dir, 'state');
    const home = join(dir, 'home');
    await mkdir(home, { recursive: true });
    const configPath = join(dir, 'one-works.yaml');
    const config = {
      state: { directory: stateDir, backend: 'postgres', postgres: { url: '${FLEET_DB_URL}' }, sharedHomes: options.sharedHomes ?? false },
      cache: { directory: join(dir, 'cache') },
      workspaces: { approved: options.approved ?? [this.workspace] },
      orchestrator: {
        maxConcurrentRuns: options.maxConcurrentRuns,
        ...(options.fleetMaxConcurrentRuns === undefined ? {} : { fleetMaxConcurrentRuns: options.fleetMaxConcurrentRuns }),
        workerLeaseMs: options.workerLeaseMs ?? 5000,
        keepWarmMs: 0,
        askTimeoutMs: 0,
        cancelGraceMs: 2000,
      },
      adapters: {
        process: { harnesses: { tiny: { command: process.execPath, args: [RUNNER, this.ledgerPath], tools: [] } } },
      },
    };
    await writeFile(configPath, stringify(config));
    const child = spawn(process.execPath, [ONE_WORKS_BIN, '--config', configPath, 'serve', '--worker', name], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, FLEET_DB_URL: this.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-200_000);
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const entry = { child, exited };
    this.#workers.add(entry);
    void exited.then(() => this.#workers.delete(entry));
    const serving = await Promise.race([
      (async () => {
        while (!stderr.includes(`worker ${name} serving`)) await new Promise((resolve) => setTimeout(resolve, 50));
        return true;
      })(),
      exited.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 60_000)),
    ]);
    if (!serving) {
      child.kill('SIGKILL');
      throw new Error(`worker ${name} did not start serving:\n${stderr}`);
    }
    return { name, pid: child.pid!, stateDir, stderr: () => stderr, exited };
  }

  /** A store for submitting and reading (closed by dispose). */
  async store(): Promise<PostgresStore> {
    const store = await createPostgresStore({ url: this.url });
    this.#stores.push(store);
    return store;
  }

  /** Submits a new session's first turn; resolves with its request id and session id. */
  async create(store: PostgresStore, prompt: string, workspace = this.workspace): Promise<{ requestId: number; sessionId: string }> {
    return submitCreate(store, { adapter: FLEET_ADAPTER, workspace, prompt });
  }

  async send(store: PostgresStore, sessionId: string, prompt: string): Promise<{ requestId: number; sessionId: string }> {
    return submitSend(store, { sessionId, prompt });
  }

  async accepted(store: PostgresStore, requestId: number): Promise<TurnHandle> {
    return awaitAccepted(store, requestId, AbortSignal.timeout(60_000));
  }

  async ledger(): Promise<LedgerLine[]> {
    const text = await readFile(this.ledgerPath, 'utf8');
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const [token, what, at, pid] = line.split(' ');
        return { token: token!, what: what as LedgerLine['what'], at: Number(at), pid: Number(pid) };
      });
  }

  sql<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]> {
    return sql<R>(this.url, text, values);
  }

  /** Waits until no request is queued or claimed (or `timeoutMs` passed); returns the count left. */
  async drained(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await this.sql<{ n: string }>("SELECT count(*) AS n FROM queue WHERE state IN ('queued', 'claimed')").catch(() => [
        { n: '-1' },
      ]);
      const left = Number(rows[0]?.n);
      if (left === 0 || Date.now() >= deadline) return left;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Live processes under the rig's root (workers, runners). */
  processes(): ReturnType<typeof findProcesses> {
    return findProcesses(this.root);
  }

  async dispose(): Promise<void> {
    const workers = [...this.#workers];
    for (const { child } of workers) child.kill('SIGTERM');
    await waitForExit(
      workers.map(({ child }) => child.pid!),
      20_000,
    );
    for (const { child } of workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (let round = 0; round < 5; round++) {
      const left = findProcesses(this.root);
      if (left.length === 0) break;
      for (const p of left) killQuietly(p.pid);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await Promise.all(this.#stores.splice(0).map((store) => store.close()));
    await rm(this.root, { recursive: true, force: true });
  }
}

/** The server of a fleet test file (one per file: `afterAll` disposes it). */
export async function fleetServer(): Promise<TestPostgres> {
  return startTestPostgres();
}

/** The most intervals [start, end] open at one instant (an end and a start at the same instant: the end first). */
export function maxOverlap(intervals: Array<{ start: number; end: number }>): number {
  const edges = intervals.flatMap(({ start, end }) => [
    { at: start, delta: 1 },
    { at: end, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const edge of edges) {
    open += edge.delta;
    most = Math.max(most, open);
  }
  return most;
}
