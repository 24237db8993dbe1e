import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { tryConnect } from '../../cli/daemon/client.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { startTestPostgres } from '../support/embedded-postgres.js';
import { FLEET_ADAPTER, FleetRig } from '../support/fleet-rig.js';
import { BIN, median, stopOrchestrator } from './support.js';

/**
 * Fleet bench (`BENCH_ONLY=fleet npm run bench`): dispatch latency (submit → the run's
 * `startedAt`, one turn at a time on an idle system) and throughput (TURNS turns over many
 * sessions submitted at once, until the last is done) of two `serve --worker` processes on one
 * PostgreSQL (embedded-postgres, 127.0.0.1) against one `serve` on the file backend, in the same
 * run, with the same agent (the tiny process runner, test/peers/fleet-runner.mjs, which answers
 * at once). Each worker and the single host run 4 turns at once. Printed, never asserted.
 */

const RUNNER = fileURLToPath(new URL('../peers/fleet-runner.mjs', import.meta.url));
const LATENCY_ROUNDS = Number(process.env.BENCH_FLEET_ROUNDS ?? 10);
const TURNS = Number(process.env.BENCH_FLEET_TURNS ?? 80);
const SLOTS = 4;

export interface FleetFigures {
  latencyMs: { fleet: number; single: number };
  turnsPerSecond: { fleet: number; single: number };
}

export async function benchFleet(root: string, report: (line: string) => void): Promise<FleetFigures> {
  const single = await singleHost(root);
  const server = await startTestPostgres();
  try {
    const rig = await FleetRig.create(server);
    try {
      await Promise.all([rig.startWorker('w-a', { maxConcurrentRuns: SLOTS }), rig.startWorker('w-b', { maxConcurrentRuns: SLOTS })]);
      const store = await rig.store();
      const fleetLatency: number[] = [];
      for (let i = 0; i < LATENCY_ROUNDS; i++) {
        const t0 = Date.now();
        const { requestId, sessionId } = await rig.create(store, `t-l${i} sleep:0`);
        await rig.accepted(store, requestId);
        await rig.drained(60_000);
        const startedAt = (await store.readSession(sessionId)).runs[0]?.startedAt;
        fleetLatency.push(Date.parse(startedAt ?? '') - t0);
      }
      const t0 = performance.now();
      const sessions = Math.ceil(TURNS / 2);
      const ids: string[] = [];
      for (let i = 0; i < sessions; i++) ids.push((await rig.create(store, `t-c${i} sleep:0`)).sessionId);
      for (let i = 0; i < TURNS - sessions; i++) await rig.send(store, ids[i]!, `t-s${i} sleep:0`);
      await rig.drained(600_000);
      const fleetRate = (TURNS * 1000) / (performance.now() - t0);

      const figures: FleetFigures = {
        latencyMs: { fleet: median(fleetLatency), single: median(single.latency) },
        turnsPerSecond: { fleet: fleetRate, single: single.rate },
      };
      report(
        `fleet dispatch latency (submit → started, median of ${LATENCY_ROUNDS}): two workers ${figures.latencyMs.fleet.toFixed(0)} ms, single host ${figures.latencyMs.single.toFixed(0)} ms`,
      );
      report(
        `fleet throughput (${TURNS} turns, ${SLOTS} at once per host): two workers ${figures.turnsPerSecond.fleet.toFixed(1)} turns/s, single host ${figures.turnsPerSecond.single.toFixed(1)} turns/s`,
      );
      return figures;
    } finally {
      await rig.dispose();
    }
  } finally {
    await server.dispose();
  }
}

// The same measurements on one `serve` (file backend) through its control socket.
async function singleHost(root: string): Promise<{ latency: number[]; rate: number }> {
  const dir = join(root, 'single');
  const stateDir = join(dir, 'state');
  const workspace = join(dir, 'ws');
  await mkdir(workspace, { recursive: true });
  const ledger = join(dir, 'ledger.txt');
  await writeFile(ledger, '');
  const config = join(dir, 'one-works.yaml');
  await writeFile(
    config,
    stringify({
      state: { directory: stateDir },
      cache: { directory: join(dir, 'cache') },
      workspaces: { approved: [workspace] },
      orchestrator: { maxConcurrentRuns: SLOTS, maxQueuedTotal: TURNS * 2, keepWarmMs: 0, askTimeoutMs: 0 },
      adapters: { process: { harnesses: { tiny: { command: process.execPath, args: [RUNNER, ledger], tools: [] } } } },
    }),
  );
  const child = spawn(process.execPath, [BIN, '--config', config, 'serve'], { cwd: dir, stdio: 'ignore' });
  try {
    let client = await tryConnect(socketPath(stateDir));
    for (let i = 0; !client && i < 300; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client = await tryConnect(socketPath(stateDir));
    }
    if (!client) throw new Error('the single-host serve did not start');
    try {
      const startedAt = async (sessionId: string): Promise<number> => {
        const record = JSON.parse(await readFile(join(stateDir, 'sessions', sessionId, 'session.json'), 'utf8')) as {
          runs: Array<{ startedAt?: string }>;
        };
        return Date.parse(record.runs[0]?.startedAt ?? '');
      };
      const latency: number[] = [];
      for (let i = 0; i < LATENCY_ROUNDS; i++) {
        const t0 = Date.now();
        const handle = await client.createSession({ adapter: FLEET_ADAPTER, workspace, prompt: `t-l${i} sleep:0` });
        await client.waitForRun(handle.sessionId, handle.runId);
        latency.push((await startedAt(handle.sessionId)) - t0);
      }
      const t0 = performance.now();
      const sessions = Math.ceil(TURNS / 2);
      const handles = [];
      for (let i = 0; i < sessions; i++)
        handles.push(await client.createSession({ adapter: FLEET_ADAPTER, workspace, prompt: `t-c${i} sleep:0` }));
      for (let i = 0; i < TURNS - sessions; i++)
        handles.push(await client.sendMessage({ sessionId: handles[i]!.sessionId, prompt: `t-s${i} sleep:0` }));
      for (const handle of handles) await client.waitForRun(handle.sessionId, handle.runId);
      return { latency, rate: (TURNS * 1000) / (performance.now() - t0) };
    } finally {
      await client.close();
    }
  } finally {
    await stopOrchestrator(stateDir);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
