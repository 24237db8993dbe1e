/**
 * `npm run bench`: One Works' overhead over a minimal raw client driving the SAME droid binary
 * with the SAME scripted model, measured in the same run and printed as ratios (never asserted).
 *
 *  - startup: `one-works run` process start → its `session.started` event, against the raw
 *    client's spawn → `initialize_session` + settings responses; once with no orchestrator
 *    running (the run auto-starts one: the cost of a first command) and once with it up (a
 *    second run in the same state directory); the orchestrator is then stopped;
 *  - per turn: N text turns through SessionRunner (library), against N raw turns;
 *  - admission: 1,000 queued turns drained through the orchestrator's admission core against a
 *    plain FIFO in the same run, and memory per idle session (test/bench/admission.ts, in its
 *    own process so that heap readings are not disturbed by what the droid rounds left behind).
 *
 * The droid binary comes from the managed cache (installed on first use).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { resolveDroidCli } from '../../adapters/droid/cli-source.js';
import { createPrepareServices } from '../../core/install/index.js';
import { startRawDroid } from '../support/raw-droid-client.js';
import { droidCustomModel, startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));
const CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));
const STARTUP_ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5);
const TURNS = Number(process.env.BENCH_TURNS ?? 10);

const textSteps = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `reply ${i}` }));

async function main(): Promise<void> {
  const cli = await resolveDroidCli(
    { source: 'managed', version: '0.225.2' },
    { services: createPrepareServices(), cacheDir: CACHE, lock: new Map(), env: process.env },
  );
  const root = await mkdtemp(join(tmpdir(), 'one-works-bench-'));
  const model = await startScriptedModel({ steps: textSteps(10_000) });
  try {
    const { entry, modelId } = droidCustomModel(model.baseUrl, { apiKey: 'sk-bench' });
    const rawStart: number[] = [];
    const owCold: number[] = [];
    const owWarm: number[] = [];
    for (let i = 0; i < STARTUP_ROUNDS; i++) {
      rawStart.push(await rawStartup(cli.binaryPath, root, i, entry, modelId));
      const dir = join(root, `ow-start-${i}`);
      const config = await writeConfig(dir, entry, modelId);
      try {
        owCold.push(await oneWorksStartup(dir, config));
        owWarm.push(await oneWorksStartup(dir, config));
      } finally {
        await stopOrchestrator(join(dir, 'state'));
      }
    }
    const raw = await rawTurns(cli.binaryPath, root, entry, modelId);
    const ow = await oneWorksTurns(root, entry, modelId);
    report('startup to session ready, orchestrator auto-started (ms)', owCold, rawStart);
    report('startup to session ready, orchestrator running (ms)', owWarm, rawStart);
    report(`per text turn over ${TURNS} turns (ms)`, ow, raw);
    process.stdout.write(
      `machine: ${process.platform} ${process.arch}, ${cpus()[0]?.model ?? '?'} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, droid ${cli.version}\n`,
    );
    await execa(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./admission.ts', import.meta.url))], {
      stdout: 'inherit',
      stderr: 'inherit',
    });
  } finally {
    await model.close();
    await rm(root, { recursive: true, force: true });
  }
}

async function rawStartup(binary: string, root: string, i: number, entry: unknown, modelId: string): Promise<number> {
  const dir = join(root, `raw-start-${i}`);
  await mkdir(join(dir, 'ws'), { recursive: true });
  const t0 = performance.now();
  const client = await startRawDroid({ binary, cwd: join(dir, 'ws'), home: join(dir, 'home'), settings: { customModels: [entry] } });
  try {
    await client.request('droid.initialize_session', { machineId: 'bench', cwd: join(dir, 'ws'), autonomyLevel: 'low' });
    await client.request('droid.update_session_settings', { modelId, autonomyLevel: 'low' });
    return performance.now() - t0;
  } finally {
    await client.close();
  }
}

async function oneWorksStartup(dir: string, config: string): Promise<number> {
  const t0 = performance.now();
  const child = execa(BIN, ['--config', config, '--json', 'run', '--workspace', join(dir, 'ws'), 'hello'], {
    reject: false,
    buffer: false,
  });
  let elapsed: number | undefined;
  let buffered = '';
  for await (const chunk of child.stdout!) {
    buffered += String(chunk);
    if (elapsed === undefined && buffered.includes('"type":"session.started"')) elapsed = performance.now() - t0;
  }
  await child;
  if (elapsed === undefined) throw new Error(`one-works run printed no session.started event (exit ${child.exitCode})`);
  return elapsed;
}

// SIGTERM to the state directory's orchestrator (its pid is in owner.json), then waits for it to go.
async function stopOrchestrator(stateDir: string): Promise<void> {
  const owner = JSON.parse(await readFile(join(stateDir, 'owner.json'), 'utf8').catch(() => '{}')) as { pid?: number };
  if (owner.pid === undefined) return;
  try {
    process.kill(owner.pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let waited = 0; waited < 10_000; waited += 50) {
    try {
      process.kill(owner.pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.kill(owner.pid, 'SIGKILL');
}

async function rawTurns(binary: string, root: string, entry: unknown, modelId: string): Promise<number[]> {
  const dir = join(root, 'raw-turns');
  await mkdir(join(dir, 'ws'), { recursive: true });
  const client = await startRawDroid({ binary, cwd: join(dir, 'ws'), home: join(dir, 'home'), settings: { customModels: [entry] } });
  try {
    await client.request('droid.initialize_session', { machineId: 'bench', cwd: join(dir, 'ws'), autonomyLevel: 'low' });
    await client.request('droid.update_session_settings', { modelId, autonomyLevel: 'low' });
    const times: number[] = [];
    for (let t = 0; t < TURNS; t++) {
      const t0 = performance.now();
      await client.runTurn(`turn ${t}`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await client.close();
  }
}

async function oneWorksTurns(root: string, entry: unknown, modelId: string): Promise<number[]> {
  const { createBenchSession } = await import('./bench-session.js');
  const session = await createBenchSession(join(root, 'ow-turns'), entry, modelId);
  try {
    const times: number[] = [];
    for (let t = 0; t < TURNS; t++) {
      const t0 = performance.now();
      const outcome = await session.runner.runTurn(`turn ${t}`);
      if (outcome.status !== 'completed') throw new Error(`bench turn ${t} ended ${outcome.status} (${outcome.reason})`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await session.close();
  }
}

async function writeConfig(dir: string, entry: unknown, modelId: string): Promise<string> {
  await mkdir(join(dir, 'ws'), { recursive: true });
  const path = join(dir, 'one-works.yaml');
  await writeFile(
    path,
    [
      `state: { directory: ${join(dir, 'state')} }`,
      `cache: { directory: ${CACHE} }`,
      `workspaces: { approved: [${join(dir, 'ws')}] }`,
      'adapters:',
      '  droid:',
      '    cli: { source: managed, version: 0.225.2 }',
      `    model: "${modelId}"`,
      '    env: { FACTORY_AIRGAP_ENABLED: "true" }',
      `    customModels: [${JSON.stringify(entry)}]`,
      '',
    ].join('\n'),
  );
  return path;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function report(name: string, oneWorks: number[], raw: number[]): void {
  const o = median(oneWorks);
  const r = median(raw);
  process.stdout.write(
    `${name}: one-works median ${o.toFixed(1)}  raw client median ${r.toFixed(1)}  ratio ${(o / r).toFixed(2)}x  (n=${oneWorks.length}/${raw.length})\n`,
  );
}

export type { ScriptedModel };
await main();
