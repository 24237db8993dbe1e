/**
 * `npm run bench`: One Works' overhead over a minimal raw client driving the SAME droid binary
 * with the SAME scripted model, measured in the same run and printed as ratios (never asserted).
 * The figures are also written to docs/benchmarks.md (a table, the JSON and the machine line).
 *
 *  - CLI start-up: `one-works --version` and `one-works sessions` against `node -e 0`; `sessions`
 *    over an empty state directory (the goal row) and over one with sessions real turns recorded;
 *  - one turn: `one-works run` start to exit, with the orchestrator running and auto-started,
 *    against a raw client that spawns droid, initializes, sets the BYOK model, runs the turn and
 *    exits: the raw client as a program of its own (test/bench/raw-droid-process.ts), spawn to
 *    exit like the command; the same client inside the bench's process, timed to its turn's end
 *    (no process start, no exit), is shown alongside; and, not a goal row, the next `run` of the
 *    background orchestrator the auto-started row left, after it idled BENCH_SETTLE_MS (15 s), as
 *    between two commands of a user (the goal row's `serve` is started by hand, a fresh one per round);
 *    the rows whose `run` follows 15 s of idle (the hand-started `serve` settles that long before it)
 *    are set against a raw client program that also ran after 15 s of idle, in the same round: on
 *    this machine a turn started after 15 s of idle takes some 15% longer than one started right
 *    after another, the raw client's own included (the back-to-back comparison is printed too);
 *    the auto-started goal row's rounds share one config file and state directory, as a user's
 *    commands do (each round's orchestrator is stopped, as its idle exit would); a run with a config
 *    file no command has read before (its parsed value not kept yet) is a row of its own;
 *  - follow-up: `one-works send` within keepWarmMs (warm agent) against the raw client's spawn +
 *    load_session + turn (+ exit), as a program and in-process;
 *  - prewarm: `one-works run` start to exit with `orchestrator.prewarm: 1` (a `serve` that started
 *    a droid for the workspace after the previous run) against the raw client's one turn;
 *  - the event pipeline (test/bench/pipeline.ts) and memory: the orchestrator's idle RSS (an
 *    explicit `serve`), its growth with one warm agent (its own process only, the droid
 *    excluded), and heap per idle recorded session (test/bench/memory.ts);
 *
 *  - startup: `one-works run` process start → its `session.started` event, against the raw
 *    client's spawn → `initialize_session` + settings responses; once with no orchestrator
 *    running (the run auto-starts one: the cost of a first command) and once with it up (a
 *    second run in the same state directory); the orchestrator is then stopped;
 *  - per turn: N text turns through SessionRunner (library), against N raw turns, alternating
 *    after one untimed turn each (pairedTurns);
 *  - admission: 1,000 queued turns drained through the orchestrator's admission core against a
 *    plain FIFO in the same run, and memory per idle session (test/bench/admission.ts, in its
 *    own process so that heap readings are not disturbed by what the droid rounds left behind).
 *
 * The droid binary comes from the managed cache (installed on first use). Claude Code's startup
 * and per-turn overhead against a raw stream-json client of the same binary: test/bench/claude-code.ts.
 * `BENCH_ONLY=claude-code` runs only that part and prints it (docs/benchmarks.md is not written).
 * `BENCH_ONLY=turn-path` runs only droid's turn rows (per turn, run and send end to end, prewarm)
 * and prints them; with `BENCH_SETTLE_MS` the orchestrator's idle wait before its settled RSS is shorter.
 * The ACP adapters (gemini, droid-acp) per turn against a raw ACP client of the same binaries:
 * test/bench/acp.ts; `BENCH_ONLY=acp` runs only that part and prints it.
 * `BENCH_ONLY=pipeline` runs only the event pipeline part (no build, no agent CLI) and prints it;
 * `BENCH_PIPELINE_ROUNDS` sets its rounds (default 3). `BENCH_ONLY=cli` runs only the rows the
 * CLI's own start weighs on (`--version`, `sessions`, `run`, `send`) and prints them.
 * `BENCH_E2E_ROUNDS` sets the rounds of the `run` and `send` rows (default 9), `BENCH_CLI_ROUNDS` those
 * of `--version` and `sessions` (default 21), `BENCH_STARTUP_ROUNDS` the others' (default 5).
 * The fleet (two `serve --worker` on a real PostgreSQL) against the single-host orchestrator:
 * dispatch latency and throughput, test/bench/fleet.ts; `BENCH_ONLY=fleet` runs only that part.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { benchAcp } from './acp.js';
import { benchClaudeCode } from './claude-code.js';
import { benchCodex } from './codex.js';
import { benchFleet } from './fleet.js';
import { benchPipeline, type PipelineResult } from './pipeline.js';
import { DROID_CLI } from '../../adapters/droid/cli-source.js';
import { createPrepareServices } from '../../core/install/index.js';
import { startRawDroid } from '../support/raw-droid-client.js';
import { droidCustomModel, startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { BIN, median, oneWorksStartup, stopOrchestrator } from './support.js';

const CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));
const STARTUP_ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5);
/**
 * Rounds of `--version` and `sessions` (each some 0.1 s): their single rounds spread from 1.07x to
 * 2.83x of `node -e 0` in one bench, so 10 left the median to a round or two (BENCH_CLI_ROUNDS).
 */
const CLI_ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 21);
/**
 * Rounds of the `run` and `send` rows (start to exit): one round moved their ratio by 0.5x and more on
 * a loaded machine, so 5 rounds left a goal row's verdict to chance (BENCH_E2E_ROUNDS).
 */
const E2E_ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 9);
const BENCHMARKS_DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

/** One ratio of the bench: One Works' median against its baseline's, in the same run. */
interface Ratio {
  name: string;
  oneWorksMs: number;
  baselineMs: number;
  ratio: number;
  goal: string;
  n: string;
  /** The lowest and highest ratio of one round (round i of One Works against round i of the baseline), when paired. */
  roundRatios?: { min: number; max: number };
}
const ratios: Ratio[] = [];
const figures: Record<string, unknown> = {};
const TURNS = Number(process.env.BENCH_TURNS ?? 10);
/** Fleet: one-at-a-time dispatch rounds, and the sessions submitted at once for throughput. */
const FLEET_ROUNDS = Number(process.env.BENCH_FLEET_ROUNDS ?? 10);
const FLEET_TURNS = Number(process.env.BENCH_FLEET_TURNS ?? 40);
/** How long the orchestrator is left idle before its settled RSS is read. */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 15_000);

const textSteps = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `reply ${i}` }));

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'pipeline') {
    printPipeline(await benchPipeline(100_000, Number(process.env.BENCH_PIPELINE_ROUNDS ?? 3)));
    return;
  }
  // The command a user runs is the build (cli/bin.cjs falls back to the sources through tsx when a
  // source is newer than dist/, which an edited checkout always is): build first.
  const built = spawnSync(process.execPath, [fileURLToPath(new URL('../../scripts/build.js', import.meta.url))], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`npm run build failed (${built.signal ?? `exit ${built.status}`})`);
  if (process.env.BENCH_ONLY === 'acp') {
    const root = await mkdtemp(join(tmpdir(), 'one-works-bench-'));
    try {
      await benchAcp(root, TURNS, report);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    return;
  }
  if (process.env.BENCH_ONLY === 'codex') {
    const root = await mkdtemp(join(tmpdir(), 'one-works-bench-'));
    try {
      await benchCodex(root, STARTUP_ROUNDS, TURNS, report);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    return;
  }
  if (process.env.BENCH_ONLY === 'fleet') {
    const root = await mkdtemp(join(tmpdir(), 'one-works-bench-'));
    try {
      await benchFleet(root, FLEET_ROUNDS, FLEET_TURNS, report);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    return;
  }
  if (process.env.BENCH_ONLY === 'claude-code') {
    const root = await mkdtemp(join(tmpdir(), 'one-works-bench-'));
    try {
      await benchClaudeCode(root, STARTUP_ROUNDS, TURNS, report);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    return;
  }
  const services = createPrepareServices();
  const turnPathOnly = process.env.BENCH_ONLY === 'turn-path';
  const cli = await services.resolveCli({ source: 'managed', version: '0.225.2' }, DROID_CLI, {
    services,
    cacheDir: CACHE,
    lock: new Map(),
  });
  const root = await mkdtemp(join(tmpdir(), 'one-works-bench-'));
  const model = await startScriptedModel({ steps: textSteps(10_000) });
  try {
    const { entry, modelId } = droidCustomModel(model.baseUrl, { apiKey: 'sk-bench' });
    if (turnPathOnly) {
      // The droid per-turn row, run and send end to end, and prewarm; printed only.
      const turns = await pairedTurns(cli.binaryPath, root, entry, modelId);
      report(`per text turn over ${TURNS} turns (ms)`, turns.ow, turns.raw, 'n/a');
      await turnsEndToEnd(cli.binaryPath, root, entry, modelId);
      await prewarmedRuns(cli.binaryPath, root, entry, modelId);
      return;
    }
    if (process.env.BENCH_ONLY === 'cli') {
      await cliStartup(root, entry, modelId);
      await turnsEndToEnd(cli.binaryPath, root, entry, modelId);
      await sessionsWithRecords(root, entry, modelId);
      return;
    }
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
    const turns = await pairedTurns(cli.binaryPath, root, entry, modelId);
    report('startup to session ready, orchestrator auto-started (ms)', owCold, rawStart, 'n/a');
    report('startup to session ready, orchestrator running (ms)', owWarm, rawStart, 'n/a');
    report(`per text turn over ${TURNS} turns (ms)`, turns.ow, turns.raw, 'n/a');
    const claudeVersion = await benchClaudeCode(root, STARTUP_ROUNDS, TURNS, report);
    const codexVersion = await benchCodex(root, STARTUP_ROUNDS, TURNS, report);
    await benchAcp(root, TURNS, report);
    await cliStartup(root, entry, modelId);
    await turnsEndToEnd(cli.binaryPath, root, entry, modelId);
    await sessionsWithRecords(root, entry, modelId);
    await prewarmedRuns(cli.binaryPath, root, entry, modelId);
    figures.fleet = await benchFleet(root, FLEET_ROUNDS, FLEET_TURNS, report);
    const pipeline = await benchPipeline();
    figures.pipeline = pipeline;
    printPipeline(pipeline);
    const memory = await execa(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./memory.ts', import.meta.url))]);
    const idleSession = (JSON.parse(memory.stdout) as { idleSessionBytes: number }).idleSessionBytes;
    figures.idleSessionHeapBytes = idleSession;
    process.stdout.write(`memory per idle recorded session (orchestrator heap): ${(idleSession / 1024).toFixed(1)} KiB\n`);
    const machine = `${process.platform} ${process.arch}, ${cpus()[0]?.model ?? '?'} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${loadavg()[0]!.toFixed(2)}, node ${process.version}, droid ${cli.version}, claude-code ${claudeVersion}, codex ${codexVersion}`;
    process.stdout.write(`machine: ${machine}\n`);
    await execa(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./admission.ts', import.meta.url))], {
      stdout: 'inherit',
      stderr: 'inherit',
    });
    await writeBenchmarksDoc(machine);
  } finally {
    await model.close();
    await rm(root, { recursive: true, force: true });
  }
}

function printPipeline(pipeline: PipelineResult): void {
  process.stdout.write(
    `event pipeline: ${pipeline.notifications} droid notifications (${pipeline.persistedEvents} events persisted): one-works ${Math.round(pipeline.pipelinePerSecond)}/s  bare JSON.parse + append ${Math.round(pipeline.baselinePerSecond)}/s  ratio ${pipeline.ratio.toFixed(2)}x; by CPU time one-works ${Math.round(pipeline.pipelineCpuPerSecond)}/s  bare ${Math.round(pipeline.baselineCpuPerSecond)}/s  ratio ${pipeline.cpuRatio.toFixed(2)}x (goal: 100000/s)\n`,
  );
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

// The droid per-turn row: a raw client and a One Works session (SessionRunner as a library) side
// by side, each started and given one untimed turn first (the raw client's start is not timed
// either), then their turns alternate, so that both see the same load at the same moment.
async function pairedTurns(binary: string, root: string, entry: unknown, modelId: string): Promise<{ raw: number[]; ow: number[] }> {
  const dir = join(root, 'raw-turns');
  await mkdir(join(dir, 'ws'), { recursive: true });
  const client = await startRawDroid({ binary, cwd: join(dir, 'ws'), home: join(dir, 'home'), settings: { customModels: [entry] } });
  const { createBenchSession } = await import('./bench-session.js');
  try {
    await client.request('droid.initialize_session', { machineId: 'bench', cwd: join(dir, 'ws'), autonomyLevel: 'low' });
    await client.request('droid.update_session_settings', { modelId, autonomyLevel: 'low' });
    const session = await createBenchSession(join(root, 'ow-turns'), entry, modelId);
    try {
      const oneWorksTurn = async (t: number): Promise<number> => {
        const t0 = performance.now();
        const outcome = await session.runner.runTurn(`turn ${t}`);
        if (outcome.status !== 'completed') throw new Error(`bench turn ${t} ended ${outcome.status} (${outcome.reason})`);
        return performance.now() - t0;
      };
      await client.runTurn('warm-up');
      await oneWorksTurn(-1);
      const raw: number[] = [];
      const ow: number[] = [];
      for (let t = 0; t < TURNS; t++) {
        const t0 = performance.now();
        await client.runTurn(`turn ${t}`);
        raw.push(performance.now() - t0);
        ow.push(await oneWorksTurn(t));
      }
      return { raw, ow };
    } finally {
      await session.close();
    }
  } finally {
    await client.close();
  }
}

async function writeConfig(dir: string, entry: unknown, modelId: string, orchestrator?: Record<string, number>): Promise<string> {
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
      ...(orchestrator ? [`orchestrator: ${JSON.stringify(orchestrator)}`] : []),
      '',
    ].join('\n'),
  );
  return path;
}

function report(name: string, oneWorks: number[], raw: number[], goal: string, baseline = 'raw client', subject = 'one-works'): void {
  const o = median(oneWorks);
  const r = median(raw);
  const n = `${oneWorks.length}/${raw.length}`;
  const roundRatios = pairedRange(oneWorks, raw);
  ratios.push({ name, oneWorksMs: o, baselineMs: r, ratio: o / r, goal, n, ...(roundRatios ? { roundRatios } : {}) });
  const spread = roundRatios ? `, rounds ${roundRange(roundRatios)}` : '';
  process.stdout.write(
    `${name}: ${subject} median ${o.toFixed(1)}  ${baseline} median ${r.toFixed(1)}  ratio ${(o / r).toFixed(2)}x  goal ${goal}  (n=${n}${spread})\n`,
  );
}

// Every row's samples are taken in rounds, One Works and its baseline one after the other: the
// ratios of single rounds show how far one run's noise moves the ratio of the medians.
function pairedRange(oneWorks: number[], raw: number[]): { min: number; max: number } | undefined {
  if (oneWorks.length !== raw.length || oneWorks.length < 2) return undefined;
  const each = oneWorks.map((ms, i) => ms / raw[i]!);
  return { min: Math.min(...each), max: Math.max(...each) };
}

function roundRange(range: { min: number; max: number }): string {
  return `${range.min.toFixed(2)}–${range.max.toFixed(2)}x`;
}

// Wall time of one command, start to exit (it must exit 0).
async function timed(file: string, args: string[], cwd: string): Promise<number> {
  const t0 = performance.now();
  const result = await execa(file, args, { cwd, reject: false, stdin: 'ignore' });
  const ms = performance.now() - t0;
  if (result.exitCode !== 0) throw new Error(`${file} ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return ms;
}

// `one-works --version` and `one-works sessions` (no orchestrator running) against `node -e 0`, paired rounds.
async function cliStartup(root: string, entry: unknown, modelId: string): Promise<void> {
  const dir = join(root, 'cli-startup');
  const config = await writeConfig(dir, entry, modelId);
  const node: number[] = [];
  const version: number[] = [];
  const sessions: number[] = [];
  for (let i = 0; i < CLI_ROUNDS; i++) {
    node.push(await timed(process.execPath, ['-e', '0'], dir));
    version.push(await timed(process.execPath, [BIN, '--version'], dir));
    sessions.push(await timed(process.execPath, [BIN, '--config', config, 'sessions'], dir));
  }
  report('one-works --version, start to exit (ms)', version, node, '<= 1.5x', 'node -e 0');
  report('one-works sessions, start to exit (ms)', sessions, node, '<= 1.5x', 'node -e 0');
}

/** How many sessions the state directory of the `sessions` row with recorded sessions holds. */
const RECORDED_SESSIONS = 5;

// `one-works sessions` over a state directory holding RECORDED_SESSIONS sessions that real turns
// recorded (the row above lists an empty one), no orchestrator running, against `node -e 0`:
// shown alongside the goal row, which it does not replace.
async function sessionsWithRecords(root: string, entry: unknown, modelId: string): Promise<void> {
  const dir = join(root, 'cli-sessions-recorded');
  const config = await writeConfig(dir, entry, modelId);
  try {
    for (let i = 0; i < RECORDED_SESSIONS; i++) {
      await timed(process.execPath, [BIN, '--config', config, 'run', '--workspace', join(dir, 'ws'), `hello ${i}`], dir);
    }
  } finally {
    await stopOrchestrator(join(dir, 'state'));
  }
  const node: number[] = [];
  const sessions: number[] = [];
  for (let i = 0; i < CLI_ROUNDS; i++) {
    node.push(await timed(process.execPath, ['-e', '0'], dir));
    sessions.push(await timed(process.execPath, [BIN, '--config', config, 'sessions'], dir));
  }
  report(`one-works sessions, ${RECORDED_SESSIONS} recorded sessions, start to exit (ms)`, sessions, node, 'n/a', 'node -e 0');
}

// `run` (orchestrator auto-started, and running), `send` within keepWarmMs, against the raw
// client's one turn and its spawn + load + turn; and the orchestrator's RSS idle and with one warm agent.
async function turnsEndToEnd(binary: string, root: string, entry: unknown, modelId: string): Promise<void> {
  // Baselines: the raw client as a program of its own, spawn to exit (what the goals compare
  // with), and the same client inside the bench's process, timed to its turn's end (no process
  // start, no exit), shown alongside.
  const rawOne: number[] = [];
  const rawFollow: number[] = [];
  const rawOneInProcess: number[] = [];
  const rawFollowInProcess: number[] = [];
  const auto: number[] = [];
  const autoNewConfig: number[] = [];
  const background: number[] = [];
  // The user's config and state directory, kept between rounds as between a user's commands: each
  // round's `run` finds no orchestrator (the previous round's was stopped, as an idle exit leaves it)
  // and starts one, which recovers the sessions of the rounds before.
  const autoDir = join(root, 'e2e-auto');
  const autoConfig = await writeConfig(autoDir, entry, modelId);
  // Used once before, untimed: the config is a known one from the first round on.
  try {
    await timed(process.execPath, [BIN, '--config', autoConfig, 'run', '--workspace', join(autoDir, 'ws'), 'first'], autoDir);
  } finally {
    await stopOrchestrator(join(autoDir, 'state'));
  }
  const up: number[] = [];
  const send: number[] = [];
  // The raw client program after SETTLE_MS of idle, as the hand-started `serve`'s first run comes.
  const rawAfterIdle: number[] = [];
  const idleRss: number[] = [];
  const settledRss: number[] = [];
  const warmRss: number[] = [];
  for (let i = 0; i < E2E_ROUNDS; i++) {
    const raw = await rawOneTurn(binary, root, i, entry, modelId);
    rawOneInProcess.push(raw.ms);
    rawFollowInProcess.push(await rawFollowUp(binary, raw, entry));
    const rawDir = join(root, `raw-process-${i}`);
    const rawProcess = await rawProcessTurn(binary, root, rawDir, entry, modelId);
    rawOne.push(rawProcess.ms);
    rawFollow.push((await rawProcessTurn(binary, root, rawDir, entry, modelId, rawProcess.sessionId)).ms);

    // A config file no command has read before: neither the client nor the server has its parsed value kept.
    const newDir = join(root, `e2e-auto-new-${i}`);
    const newConfig = await writeConfig(newDir, entry, modelId);
    try {
      autoNewConfig.push(
        await timed(process.execPath, [BIN, '--config', newConfig, 'run', '--workspace', join(newDir, 'ws'), 'hello'], newDir),
      );
    } finally {
      await stopOrchestrator(join(newDir, 'state'));
    }
    try {
      auto.push(await timed(process.execPath, [BIN, '--config', autoConfig, 'run', '--workspace', join(autoDir, 'ws'), 'hello'], autoDir));
      // The background server that run started, idle as between two commands of a user, then the next run.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      background.push(
        await timed(process.execPath, [BIN, '--config', autoConfig, 'run', '--workspace', join(autoDir, 'ws'), 'hello again'], autoDir),
      );
    } finally {
      await stopOrchestrator(join(autoDir, 'state'));
    }

    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    rawAfterIdle.push((await rawProcessTurn(binary, root, join(root, `raw-idle-${i}`), entry, modelId)).ms);

    const dir = join(root, `e2e-up-${i}`);
    const config = await writeConfig(dir, entry, modelId);
    const server = execa(process.execPath, [BIN, '--config', config, 'serve'], { cwd: dir, reject: false, stdin: 'ignore' });
    try {
      await waitForFile(join(dir, 'state', 'orchestrator.sock'));
      idleRss.push(await rssOf(server.pid!));
      // Idle for a while: V8 gives back the young generation the start-up grew (its memory
      // reducer runs some seconds after the last allocation burst).
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      settledRss.push(await rssOf(server.pid!));
      up.push(await timed(process.execPath, [BIN, '--config', config, 'run', '--workspace', join(dir, 'ws'), 'hello'], dir));
      const [id] = await readdir(join(dir, 'state', 'sessions'));
      send.push(await timed(process.execPath, [BIN, '--config', config, 'send', id!, 'again'], dir));
      warmRss.push(await rssOf(server.pid!));
    } finally {
      server.kill('SIGTERM');
      await server;
    }
  }
  const idleBaseline = `raw client program after ${SETTLE_MS / 1000} s idle`;
  report(
    `one turn: run, orchestrator running, start to exit, vs the raw client after the same ${SETTLE_MS / 1000} s idle (ms)`,
    up,
    rawAfterIdle,
    '<= 1.10x',
    idleBaseline,
  );
  report('one turn: run, orchestrator auto-started, start to exit (ms)', auto, rawOne, '<= 1.3x', 'raw client program');
  report(
    'one turn: run, orchestrator auto-started, a config file never read before, start to exit (ms)',
    autoNewConfig,
    rawOne,
    'n/a',
    'raw client program',
  );
  report(
    `one turn: run, background orchestrator idle ${SETTLE_MS / 1000} s after the run that started it, start to exit (ms)`,
    background,
    rawAfterIdle,
    'n/a',
    idleBaseline,
  );
  // The comparison the goal row made before it had a baseline after the same idle, and what idle alone costs.
  report('one turn: run, orchestrator running, start to exit (ms)', up, rawOne, 'n/a', 'raw client program');
  report(
    `raw client program after ${SETTLE_MS / 1000} s idle, against itself run back to back (ms)`,
    rawAfterIdle,
    rawOne,
    'n/a',
    'raw client program',
    'idle raw client',
  );
  report(
    'follow-up: send within keepWarmMs, start to exit, vs raw spawn + load + turn (ms)',
    send,
    rawFollow,
    '<= 0.5x',
    'raw client program',
  );
  report('one turn: run, orchestrator running, vs raw client in-process to turn end (ms)', up, rawOneInProcess, 'n/a', 'raw in-process');
  report(
    'one turn: run, orchestrator auto-started, vs raw client in-process to turn end (ms)',
    auto,
    rawOneInProcess,
    'n/a',
    'raw in-process',
  );
  report(
    'follow-up: send within keepWarmMs, vs raw in-process spawn + load + turn (ms)',
    send,
    rawFollowInProcess,
    'n/a',
    'raw in-process',
  );
  const idle = median(idleRss);
  const settled = median(settledRss);
  const perWarm = median(warmRss.map((rss, k) => rss - idleRss[k]!));
  figures.orchestratorIdleRssBytes = idle;
  figures.orchestratorSettledIdleRssBytes = settled;
  figures.orchestratorGrowthWithOneWarmAgentBytes = perWarm;
  process.stdout.write(
    `memory: orchestrator idle RSS ${(idle / 2 ** 20).toFixed(1)} MB as its socket appears, ${(settled / 2 ** 20).toFixed(1)} MB after ${SETTLE_MS / 1000} s idle (goal < 80 MB); growth with one warm agent after run + send (its own process, droid excluded) ${(perWarm / 2 ** 20).toFixed(1)} MB  (n=${idleRss.length})\n`,
  );
}

// `run` in a workspace whose agent the orchestrator prewarmed (`orchestrator.prewarm: 1`) after
// the previous run there, against the raw client's one turn (spawn, initialize, model, turn).
async function prewarmedRuns(binary: string, root: string, entry: unknown, modelId: string): Promise<void> {
  const dir = join(root, 'prewarm');
  const config = await writeConfig(dir, entry, modelId, { prewarm: 1 });
  const server = execa(process.execPath, [BIN, '--config', config, 'serve'], { cwd: dir, reject: false, stdin: 'ignore', buffer: false });
  let readyLines = 0;
  let stderr = '';
  server.stderr!.on('data', (chunk: Buffer) => {
    stderr += String(chunk);
    const lines = stderr.split('\n');
    stderr = lines.pop() ?? '';
    readyLines += lines.filter((line) => /prewarmed agent \S+ .* ready in /.test(line)).length;
  });
  const rawOne: number[] = [];
  const prewarmed: number[] = [];
  const run = () => timed(process.execPath, [BIN, '--config', config, 'run', '--workspace', join(dir, 'ws'), 'hello'], dir);
  try {
    await waitForFile(join(dir, 'state', 'orchestrator.sock'));
    await run();
    for (let i = 0; i < STARTUP_ROUNDS; i++) {
      await until(() => readyLines > i, 60_000, 'a prewarmed droid');
      rawOne.push((await rawProcessTurn(binary, root, join(root, `raw-prewarm-${i}`), entry, modelId)).ms);
      prewarmed.push(await run());
    }
  } finally {
    server.kill('SIGTERM');
    await server;
  }
  report(
    'one turn: run with a prewarmed agent (orchestrator.prewarm: 1), start to exit (ms)',
    prewarmed,
    rawOne,
    '< 1x',
    'raw client program',
  );
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  for (let waited = 0; waited < timeoutMs; waited += 50) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${what} within ${timeoutMs / 1000} s`);
}

interface RawSession {
  ms: number;
  dir: string;
  nativeId: string;
}

// The raw client's one turn: spawn, initialize, set the model, run the turn; timed to the turn's end (exit not awaited).
async function rawOneTurn(binary: string, root: string, i: number, entry: unknown, modelId: string): Promise<RawSession> {
  const dir = join(root, `raw-one-${i}`);
  await mkdir(join(dir, 'ws'), { recursive: true });
  const t0 = performance.now();
  const client = await startRawDroid({ binary, cwd: join(dir, 'ws'), home: join(dir, 'home'), settings: { customModels: [entry] } });
  try {
    const init = (await client.request('droid.initialize_session', { machineId: 'bench', cwd: join(dir, 'ws'), autonomyLevel: 'low' })) as {
      sessionId: string;
    };
    await client.request('droid.update_session_settings', { modelId, autonomyLevel: 'low' });
    await client.runTurn('hello');
    return { ms: performance.now() - t0, dir, nativeId: init.sessionId };
  } finally {
    await client.close();
  }
}

// The raw client's follow-up in a new process: spawn, load the session, run the turn.
async function rawFollowUp(binary: string, session: RawSession, entry: unknown): Promise<number> {
  const { dir } = session;
  const t0 = performance.now();
  const client = await startRawDroid({ binary, cwd: join(dir, 'ws'), home: join(dir, 'home'), settings: { customModels: [entry] } });
  try {
    await client.request('droid.load_session', { sessionId: session.nativeId });
    await client.runTurn('again');
    return performance.now() - t0;
  } finally {
    await client.close();
  }
}

/** The raw client as its own program (test/bench/raw-droid-process.ts), bundled once per bench run into plain JavaScript. */
let rawProgram: string | undefined;
async function rawProgramPath(root: string): Promise<string> {
  if (rawProgram) return rawProgram;
  const { build } = await import('esbuild');
  const outfile = join(root, 'raw-droid-process.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./raw-droid-process.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  rawProgram = outfile;
  return outfile;
}

// The raw client's one turn (or, with `load`, its follow-up) as a program of its own, timed from
// its spawn to its exit like `one-works run`; then, untimed, waits until the droid it SIGTERMed is gone.
async function rawProcessTurn(
  binary: string,
  root: string,
  dir: string,
  entry: unknown,
  modelId: string,
  load?: string,
): Promise<{ ms: number; sessionId: string }> {
  const program = await rawProgramPath(root);
  await mkdir(join(dir, 'ws'), { recursive: true });
  const request = {
    binary,
    cwd: join(dir, 'ws'),
    home: join(dir, 'home'),
    settings: { customModels: [entry] },
    modelId,
    ...(load ? { load } : {}),
  };
  const t0 = performance.now();
  const result = await execa(process.execPath, [program, JSON.stringify(request)], { reject: false, stdin: 'ignore' });
  const ms = performance.now() - t0;
  if (result.exitCode !== 0) throw new Error(`the raw client program exited ${result.exitCode}: ${result.stderr}`);
  const { sessionId, pid } = JSON.parse(result.stdout) as { sessionId: string; pid: number };
  await goneOrKilled(pid);
  return { ms, sessionId };
}

// Waits (10 s) for a process group to be gone, then SIGKILLs what is left of it.
async function goneOrKilled(pgid: number): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/^VmRSS:\s+(\d+)\s+kB/m)?.[1] ?? Number.NaN) * 1024;
}

async function waitForFile(path: string): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 50) {
    if (
      await stat(path).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${path} did not appear within 60 s`);
}

// docs/benchmarks.md: the table of ratios, the other figures and the machine line, then the JSON.
async function writeBenchmarksDoc(machine: string): Promise<void> {
  const before = await previousRun();
  const was = (name: string): string => {
    const ratio = before?.ratios.find((r) => r.name === name)?.ratio;
    return ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}x`;
  };
  const rows = ratios.map(
    (r) =>
      `| ${r.name} | ${r.oneWorksMs.toFixed(1)} | ${r.baselineMs.toFixed(1)} | ${r.ratio.toFixed(2)}x | ${r.roundRatios ? roundRange(r.roundRatios) : 'n/a'} | ${was(r.name)} | ${r.goal} | ${r.n} |`,
  );
  const json = {
    generatedAt: new Date().toISOString(),
    machine,
    ratios,
    figures,
    ...(before
      ? { before: { generatedAt: before.generatedAt, machine: before.machine, ratios: before.ratios, figures: before.figures } }
      : {}),
  };
  const text = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (test/bench/run.ts); do not edit by hand. Medians of paired runs in one',
    'bench run, One Works against a baseline measured in the same run (raw client: a minimal',
    'stream-jsonrpc client driving the same droid binary with the same scripted model; for the',
    '`claude-code:` rows a minimal stream-json client of the same claude binary with the same scripted',
    'Anthropic model; for the `codex:` rows a minimal JSON-RPC client of the same `codex app-server` with',
    'the same config.toml and scripted Responses model; for the `gemini:` and `droid-acp:` rows a minimal',
    "ACP client on the SDK spawning the adapter's own launch of the same binary with the same scripted",
    'model). For the `run`, `send` and prewarm rows (start to exit) the baseline is the raw client as a',
    'program of its own (`node` on test/bench/raw-droid-process.ts bundled), spawn to exit; the rows',
    '"vs raw client in-process" compare the same commands with that client run inside the bench\'s',
    "process and timed to its turn's end (no process start, no exit). Before 2026-12-02 the goal rows",
    'used the in-process figure, so their "before" ratios are against that baseline. A `run` that',
    `follows ${SETTLE_MS / 1000} s of idle (the hand-started \`serve\` settles that long first, and the`,
    "background orchestrator's second run) is set against the raw client program run after the same idle",
    'in the same round: idle alone slows a turn here, the raw client\'s own included (the row "raw client',
    'program after … idle" shows by how much). Runs before 2026-12-03 17:00 UTC set the hand-started',
    'goal row against the back-to-back baseline, which its row of that name still shows. The',
    'auto-started goal row runs with one config file and state directory for all its rounds (each',
    "round's orchestrator stopped before the next), as a user's commands do; runs before 2026-12-03",
    '17:00 UTC wrote a new config file for each round, as the row "a config file never read before"',
    'still does.',
    'The machine is shared, so figures are noisy; compare ratios, not milliseconds',
    'across runs. "rounds" is the lowest and highest ratio of a single round (One Works\'s sample i',
    "against the baseline's sample i, taken one after the other): how far noise moves a ratio. The",
    'bench builds dist/ first (`npm run build`) and times `cli/bin.cjs`, i.e. what an installed command',
    'runs.',
    '',
    `Machine: ${machine}`,
    ...(before ? ['', `Before (the previous run, whose ratios the "before" column shows): ${before.machine}, ${before.generatedAt}`] : []),
    '',
    '| measure | one-works (ms) | baseline (ms) | ratio | rounds | before | goal | n |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...figureLines(figures, before?.figures),
    '',
    '```json',
    JSON.stringify(json, null, 2),
    '```',
    '',
  ].join('\n');
  await writeFile(BENCHMARKS_DOC, text);
  process.stdout.write(`wrote ${BENCHMARKS_DOC}\n`);
}

// The figures that are not ratios of times, this run's and the previous run's where it had them.
function figureLines(now: Record<string, unknown>, was: Record<string, unknown> | undefined): string[] {
  const mb = (value: unknown) => (typeof value === 'number' ? `${(value / 2 ** 20).toFixed(1)} MB` : 'n/a');
  const rate = (value: unknown) => (typeof value === 'number' ? `${Math.round(value)}/s` : 'n/a');
  const pipe = (figures: Record<string, unknown> | undefined) => (figures?.pipeline ?? {}) as Record<string, unknown>;
  return [
    '| figure | now | before | goal |',
    '| --- | --- | --- | --- |',
    `| event pipeline, wall time (bare JSON.parse + append: ${rate(pipe(now).baselinePerSecond)}) | ${rate(pipe(now).pipelinePerSecond)} | ${rate(pipe(was).pipelinePerSecond)} | 100000/s |`,
    `| event pipeline, CPU time (bare JSON.parse + append: ${rate(pipe(now).baselineCpuPerSecond)}) | ${rate(pipe(now).pipelineCpuPerSecond)} | ${rate(pipe(was).pipelineCpuPerSecond)} | 100000/s |`,
    `| orchestrator RSS as its socket appears | ${mb(now.orchestratorIdleRssBytes)} | ${mb(was?.orchestratorIdleRssBytes)} | < 80 MB |`,
    `| orchestrator RSS after ${SETTLE_MS / 1000} s idle | ${mb(now.orchestratorSettledIdleRssBytes)} | ${mb(was?.orchestratorSettledIdleRssBytes)} | < 80 MB |`,
    `| orchestrator growth with one warm agent (droid excluded) | ${mb(now.orchestratorGrowthWithOneWarmAgentBytes)} | ${mb(was?.orchestratorGrowthWithOneWarmAgentBytes)} | n/a |`,
  ];
}

interface BenchRun {
  generatedAt: string;
  machine: string;
  ratios: Ratio[];
  figures: Record<string, unknown>;
}

// The run docs/benchmarks.md holds now (its JSON block), if any: the "before" of this one.
async function previousRun(): Promise<BenchRun | undefined> {
  const text = await readFile(BENCHMARKS_DOC, 'utf8').catch(() => '');
  const json = /```json\n([\s\S]*?)\n```/.exec(text)?.[1];
  if (!json) return undefined;
  try {
    return JSON.parse(json) as BenchRun;
  } catch {
    return undefined;
  }
}

export type { ScriptedModel };
await main();
