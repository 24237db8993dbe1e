import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CodexConfigSchema, codexAdapter } from '../../adapters/codex/index.js';
import { codexSeedFiles, describeCodexLaunch } from '../../adapters/codex/launch.js';
import type { ResolvedCli } from '../../core/adapter.js';
import { createPrepareServices } from '../../core/install/index.js';
import { SessionRunner } from '../../core/session/index.js';
import { createFileStore } from '../../core/store/index.js';
import { startScriptedResponses } from '../support/scripted-responses.js';
import { oneWorksStartup, stopOrchestrator } from './support.js';

/**
 * Codex's part of `npm run bench`: One Works driving the real `codex app-server` (0.171.0, from
 * the managed cache) against a raw JSON-RPC client of the SAME binary, launched with the SAME
 * argv, environment and config.toml (describeCodexLaunch, codexSeedFiles), with the SAME
 * scripted Responses model, in the same run, as ratios (never asserted):
 *  - startup: `one-works run --adapter codex` process start → its `session.started` event
 *    (orchestrator auto-started, and running), against the raw client's spawn → `initialize` →
 *    `thread/start` answered (the thread exists, as when One Works emits session.started);
 *  - per turn: N text turns through SessionRunner (library), against N raw `turn/start` →
 *    `turn/completed` in one process.
 */

const CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));
const VERSION = '0.171.0';
const MODEL = 'scripted-model';
const KEY = 'sk-bench-codex';

type Report = (name: string, oneWorks: number[], raw: number[], goal: string) => void;

export async function benchCodex(root: string, rounds: number, turns: number, report: Report): Promise<string> {
  const config = CodexConfigSchema.parse({ enabled: true, cli: { version: VERSION }, model: MODEL });
  const cli = await codexAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
  const model = await startScriptedResponses({ steps: Array.from({ length: 10_000 }, (_, i) => ({ text: `reply ${i}` })) });
  try {
    const raw: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < rounds; i++) {
      raw.push(await rawStartup(cli, join(root, `cx-raw-start-${i}`), model.baseUrl));
      const dir = join(root, `cx-ow-start-${i}`);
      const path = await writeCodexConfig(dir, model.baseUrl);
      try {
        cold.push(await oneWorksStartup(dir, path, 'codex'));
        warm.push(await oneWorksStartup(dir, path, 'codex'));
      } finally {
        await stopOrchestrator(join(dir, 'state'));
      }
    }
    report('codex: startup to session ready, orchestrator auto-started (ms)', cold, raw, 'n/a');
    report('codex: startup to session ready, orchestrator running (ms)', warm, raw, 'n/a');
    const rawTurns = await rawTurnTimes(cli, join(root, 'cx-raw-turns'), model.baseUrl, turns);
    const owTurns = await oneWorksTurnTimes(join(root, 'cx-ow-turns'), model.baseUrl, turns);
    report(`codex: per text turn over ${turns} turns (ms)`, owTurns, rawTurns, 'n/a');
    return cli.version;
  } finally {
    await model.close();
  }
}

type Message = { id?: number; method?: string; result?: Record<string, unknown>; error?: unknown; params?: Record<string, unknown> };

/** A minimal app-server client: the adapter's exact launch and config.toml, spawned directly, without One Works around it. */
class RawCodex {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiters: Array<{ match: (m: Message) => boolean; resolve: (m: Message) => void }> = [];
  readonly #workspace: string;
  #id = 0;
  #threadId = '';

  constructor(cli: ResolvedCli, dir: string, baseUrl: string) {
    const home = join(dir, 'home');
    this.#workspace = join(dir, 'ws');
    const launch = describeCodexLaunch(rawConfig(baseUrl), cli, { cwd: this.#workspace, home, hostEnv: { PATH: process.env.PATH } });
    this.#child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: { HOME: home, ...launch.env } });
    this.#child.stderr.resume();
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      let message: Message;
      try {
        message = JSON.parse(line) as Message;
      } catch {
        return;
      }
      for (const waiter of [...this.#waiters]) {
        if (!waiter.match(message)) continue;
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    });
  }

  static async start(cli: ResolvedCli, dir: string, baseUrl: string): Promise<RawCodex> {
    await mkdir(join(dir, 'ws'), { recursive: true });
    for (const seed of codexSeedFiles(rawConfig(baseUrl), join(dir, 'ws'))) {
      const path = join(dir, 'home', seed.path);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, seed.content);
    }
    return new RawCodex(cli, dir, baseUrl);
  }

  next(match: (m: Message) => boolean): Promise<Message> {
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  async request(method: string, params: unknown): Promise<Record<string, unknown>> {
    this.#id += 1;
    const id = this.#id;
    const answered = this.next((m) => m.id === id && m.method === undefined);
    this.#child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    const reply = await answered;
    if (reply.error) throw new Error(`codex ${method}: ${JSON.stringify(reply.error)}`);
    return reply.result ?? {};
  }

  async handshake(): Promise<void> {
    await this.request('initialize', { clientInfo: { name: 'bench', title: 'bench', version: '0' }, capabilities: null });
    this.#child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
    const started = await this.request('thread/start', {
      cwd: this.#workspace,
      approvalPolicy: 'untrusted',
      sandbox: 'workspace-write',
      model: MODEL,
    });
    this.#threadId = (started.thread as { id: string }).id;
  }

  async turn(text: string): Promise<void> {
    const done = this.next((m) => m.method === 'turn/completed');
    await this.request('turn/start', { threadId: this.#threadId, input: [{ type: 'text', text, text_elements: [] }], model: MODEL });
    await done;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.stdin.end();
    await exited;
  }
}

const rawConfig = (baseUrl: string) => CodexConfigSchema.parse({ enabled: true, model: MODEL, endpoint: { baseUrl, apiKey: KEY } });

async function rawStartup(cli: ResolvedCli, dir: string, baseUrl: string): Promise<number> {
  const t0 = performance.now();
  const client = await RawCodex.start(cli, dir, baseUrl);
  try {
    await client.handshake();
    const ms = performance.now() - t0;
    await client.turn('hello');
    return ms;
  } finally {
    await client.close();
  }
}

async function rawTurnTimes(cli: ResolvedCli, dir: string, baseUrl: string, turns: number): Promise<number[]> {
  const client = await RawCodex.start(cli, dir, baseUrl);
  try {
    await client.handshake();
    await client.turn('warm up');
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      const t0 = performance.now();
      await client.turn(`turn ${t}`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await client.close();
  }
}

async function oneWorksTurnTimes(dir: string, baseUrl: string, turns: number): Promise<number[]> {
  const store = await createFileStore(join(dir, 'state'));
  await store.acquireOwner({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() });
  await mkdir(join(dir, 'ws'), { recursive: true });
  const config = CodexConfigSchema.parse({ enabled: true, cli: { version: VERSION }, model: MODEL, endpoint: { baseUrl, apiKey: KEY } });
  const cli = await codexAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
  const runner = await SessionRunner.create(
    {
      store,
      stateDir: join(dir, 'state'),
      adapter: codexAdapter as never,
      adapterConfig: config,
      cli,
      secrets: [KEY],
      decide: async () => ({ decision: 'allow', by: 'policy' }),
      interruptGraceMs: 2000,
      runTimeoutMs: 60_000,
    },
    { workspace: join(dir, 'ws'), model: MODEL, autonomy: 'low' },
  );
  try {
    await runner.runTurn('warm up');
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      const t0 = performance.now();
      const outcome = await runner.runTurn(`turn ${t}`);
      if (outcome.status !== 'completed') throw new Error(`codex bench turn ${t} ended ${outcome.status} (${outcome.reason})`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await runner.close();
    await store.releaseOwner();
  }
}

async function writeCodexConfig(dir: string, baseUrl: string): Promise<string> {
  await mkdir(join(dir, 'ws'), { recursive: true });
  const path = join(dir, 'one-works.yaml');
  await writeFile(
    path,
    [
      `state: { directory: ${join(dir, 'state')} }`,
      `cache: { directory: ${CACHE} }`,
      `workspaces: { approved: [${join(dir, 'ws')}] }`,
      'adapters:',
      '  codex:',
      '    enabled: true',
      `    cli: { source: managed, version: ${VERSION} }`,
      `    model: ${MODEL}`,
      `    endpoint: { baseUrl: "${baseUrl}", apiKey: "${KEY}" }`,
      '',
    ].join('\n'),
  );
  return path;
}
