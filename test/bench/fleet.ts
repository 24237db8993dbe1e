import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import * as fleetQueue from '../../core/fleet/fleet-queue.js';
import type { CreateSessionRequest, TurnHandle } from '../../core/orchestrator/index.js';
import { createPostgresStore } from '../../core/store/postgres-store.js';
import { connectOrchestrator, type OrchestratorClient } from '../../cli/daemon/client.js';
import { FleetClient } from '../../cli/fleet/fleet-client.js';
import { startTestPostgres } from '../support/embedded-postgres.js';
import { ECHO_ADAPTER_YAML, startWorker, type TestWorker } from '../support/fleet-cli-rig.js';
import { BIN, median } from './support.js';

/**
 * The fleet (issue 16) against the single-host orchestrator, in the same run, with the same
 * agent (`process:echo`, test/peers/echo-runner.mjs: a turn costs only its process) and the same
 * per-host limit (`maxConcurrentRuns`):
 *  - dispatch latency: a new session's submit until an orchestrator accepted and started its
 *    turn (the handle, state `running`), one at a time on an idle system after one uncounted
 *    warm-up round each: the fleet's client
 *    queues a row and a worker woken by NOTIFY claims it, against a create over the control
 *    socket of `one-works serve`;
 *  - throughput: TURNS new sessions submitted at once, each turn lasting TURN_MS in the agent,
 *    until every one has settled, on two workers against one host (all on this machine: the
 *    workers, the host and PostgreSQL share its CPUs).
 * `BENCH_ONLY=fleet` runs only this part. A real PostgreSQL (embedded-postgres) on 127.0.0.1.
 */

const MAX_CONCURRENT = 4;
/** How long each throughput turn lasts in the agent (`sleep` in the echo runner), in ms: a turn's work, which a fleet spreads. */
const TURN_MS = Number(process.env.BENCH_FLEET_TURN_MS ?? 500);

export interface FleetFigures {
  latencyRounds: number;
  throughputTurns: number;
  fleetLatencyMs: number;
  hostLatencyMs: number;
  fleetTurnsPerSecond: number;
  hostTurnsPerSecond: number;
}

type Report = (name: string, oneWorks: number[], baseline: number[], goal: string, baselineName?: string) => void;

export async function benchFleet(root: string, rounds: number, turns: number, report: Report): Promise<FleetFigures> {
  const workspaces = join(root, 'fleet-ws');
  for (let i = 0; i < Math.max(rounds, turns); i++) await mkdir(join(workspaces, `w${i}`), { recursive: true });
  const server = await startTestPostgres();
  const workers: TestWorker[] = [];
  let host: { client: OrchestratorClient; stop: () => Promise<void> } | undefined;
  try {
    const url = await server.createDatabase();
    for (const name of ['bench-1', 'bench-2']) {
      workers.push(await startWorker(name, { dir: join(root, name), roots: [workspaces], maxConcurrentRuns: MAX_CONCURRENT, url }));
    }
    const store = await createPostgresStore({ url });
    const fleet = new FleetClient(store, fleetQueue, {
      defaultAdapter: 'process:echo',
      limits: { maxQueuedTotal: 64, maxQueuedPerSession: 8, runTimeoutMs: 3_600_000, cancelGraceMs: 5000 },
    });
    host = await startHost(join(root, 'single-host'), workspaces);
    try {
      const request = (i: number, prompt: string): CreateSessionRequest => ({
        adapter: 'process:echo',
        workspace: join(workspaces, `w${i}`),
        prompt,
      });
      // One round each first, not counted: the first create of a process loads the adapter's modules.
      await dispatch(fleet, request(0, 'warm-up'));
      await dispatch(host.client, request(0, 'warm-up'));
      const fleetLatency: number[] = [];
      const hostLatency: number[] = [];
      for (let i = 0; i < rounds; i++) {
        fleetLatency.push(await dispatch(fleet, request(i, `latency ${i}`)));
        hostLatency.push(await dispatch(host.client, request(i, `latency ${i}`)));
      }
      report('dispatch latency, submit to started (ms)', fleetLatency, hostLatency, 'n/a', 'single-host orchestrator');
      const fleetRate = await throughput(fleet, turns, (i) => request(i, `sleep ${TURN_MS} throughput ${i}`));
      const hostRate = await throughput(host.client, turns, (i) => request(i, `sleep ${TURN_MS} throughput ${i}`));
      process.stdout.write(
        `throughput, ${turns} new sessions at once, each turn ${TURN_MS} ms in the agent (turns/s): fleet of 2 workers ${fleetRate.toFixed(1)}  single-host orchestrator ${hostRate.toFixed(1)}  ratio ${(fleetRate / hostRate).toFixed(2)}x  (maxConcurrentRuns ${MAX_CONCURRENT} per host, all on this machine)\n`,
      );
      await fleet.close();
      await store.close();
      return {
        latencyRounds: rounds,
        throughputTurns: turns,
        fleetLatencyMs: median(fleetLatency),
        hostLatencyMs: median(hostLatency),
        fleetTurnsPerSecond: fleetRate,
        hostTurnsPerSecond: hostRate,
      };
    } catch (error) {
      await store.close();
      throw error;
    }
  } finally {
    await host?.stop();
    await Promise.all(workers.map((w) => w.stop()));
    await server.dispose();
  }
}

// One create, timed until it is accepted and running; then waits for it to settle (an idle system for the next).
async function dispatch(client: OrchestratorClient, request: CreateSessionRequest): Promise<number> {
  const t0 = performance.now();
  const handle: TurnHandle = await client.createSession(request);
  // Accepted but queued (the previous turn's slot not yet given back): started is when it runs.
  while (handle.state === 'queued' && (await client.status(handle.sessionId)).latestRun?.status === 'queued') {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const ms = performance.now() - t0;
  await settle(client, [handle.sessionId]);
  return ms;
}

async function throughput(client: OrchestratorClient, turns: number, request: (i: number) => CreateSessionRequest): Promise<number> {
  const t0 = performance.now();
  const handles = await Promise.all(Array.from({ length: turns }, (_, i) => client.createSession(request(i))));
  await settle(
    client,
    handles.map((h) => h.sessionId),
  );
  return turns / ((performance.now() - t0) / 1000);
}

async function settle(client: OrchestratorClient, ids: string[]): Promise<void> {
  for (;;) {
    const result = await client.wait(ids, 60_000);
    if (!result.timedOut) {
      const failed = result.settled.filter((s) => s.latestRun?.status !== 'completed');
      if (failed.length > 0) throw new Error(`turns did not complete: ${JSON.stringify(failed)}`);
      return;
    }
  }
}

// `one-works serve` on a state directory (file backend), with the same agent and per-host limit.
async function startHost(dir: string, workspaces: string): Promise<{ client: OrchestratorClient; stop: () => Promise<void> }> {
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'one-works.yaml');
  const stateDir = join(dir, 'state');
  await writeFile(
    config,
    [
      `state:\n  directory: ${stateDir}`,
      `workspaces:\n  approved:\n    - ${workspaces}`,
      `orchestrator:\n  maxConcurrentRuns: ${MAX_CONCURRENT}`,
      ECHO_ADAPTER_YAML,
      '',
    ].join('\n'),
  );
  const child = execa(process.execPath, [BIN, '--config', config, 'serve'], { cwd: dir, reject: false, stdin: 'ignore' });
  const ctx = { stateDir, configPath: config, cwd: dir, env: process.env };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = await connectOrchestrator(ctx, { autoStart: false }).catch(() => undefined);
    if (client) {
      return {
        client,
        stop: async () => {
          await client.close();
          child.kill('SIGTERM');
          await child;
        },
      };
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`one-works serve did not start: ${(await child).stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
