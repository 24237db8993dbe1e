import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ClaudeConfigSchema, claudeCodeAdapter } from '../../adapters/claude-code/index.js';
import { describeClaudeLaunch } from '../../adapters/claude-code/launch.js';
import type { ResolvedCli } from '../../core/adapter.js';
import { createPrepareServices } from '../../core/install/index.js';
import { SessionRunner } from '../../core/session/index.js';
import { createFileStore } from '../../core/store/index.js';
import { startScriptedAnthropic } from '../support/scripted-anthropic.js';
import { oneWorksStartup, stopOrchestrator } from './support.js';

/**
 * Claude Code's part of `npm run bench`: One Works driving the real `claude` (2.1.333, from the
 * managed cache) against a raw client of the SAME binary, launched with the SAME argv and
 * environment (describeClaudeLaunch), with the SAME scripted Anthropic model, in the same run,
 * as ratios (never asserted):
 *  - startup: `one-works run --adapter claude-code` process start → its `session.started` event
 *    (orchestrator auto-started, and running), against the raw client's spawn → `initialize`
 *    answered → first turn's `system/init` line (claude announces its session there);
 *  - per turn: N text turns through SessionRunner (library), against N raw turns in one process.
 */

const CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));
const VERSION = '2.1.333';
const KEY = 'sk-bench-claude';

type Report = (name: string, oneWorks: number[], raw: number[], goal: string) => void;

export async function benchClaudeCode(root: string, rounds: number, turns: number, report: Report): Promise<string> {
  const config = ClaudeConfigSchema.parse({ enabled: true, cli: { version: VERSION }, model: 'scripted' });
  const cli = await claudeCodeAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
  const model = await startScriptedAnthropic({ steps: Array.from({ length: 10_000 }, (_, i) => ({ text: `reply ${i}` })) });
  try {
    const raw: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < rounds; i++) {
      raw.push(await rawStartup(cli, join(root, `cc-raw-start-${i}`), model.baseUrl));
      const dir = join(root, `cc-ow-start-${i}`);
      const path = await writeClaudeConfig(dir, model.baseUrl);
      try {
        cold.push(await oneWorksStartup(dir, path, 'claude-code'));
        warm.push(await oneWorksStartup(dir, path, 'claude-code'));
      } finally {
        await stopOrchestrator(join(dir, 'state'));
      }
    }
    report('claude-code: startup to session ready, orchestrator auto-started (ms)', cold, raw, 'n/a');
    report('claude-code: startup to session ready, orchestrator running (ms)', warm, raw, 'n/a');
    const rawTurns = await rawTurnTimes(cli, join(root, 'cc-raw-turns'), model.baseUrl, turns);
    const owTurns = await oneWorksTurnTimes(join(root, 'cc-ow-turns'), model.baseUrl, turns);
    report(`claude-code: per text turn over ${turns} turns (ms)`, owTurns, rawTurns, 'n/a');
    return cli.version;
  } finally {
    await model.close();
  }
}

/**
 * A minimal stream-json client of claude: one process with exactly the adapter's launch (argv
 * and environment from describeClaudeLaunch), spawned directly, without One Works around it.
 */
class RawClaude {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiters: Array<{ match: (m: Record<string, unknown>) => boolean; resolve: () => void }> = [];

  constructor(cli: ResolvedCli, dir: string, baseUrl: string) {
    const home = join(dir, 'home');
    const config = ClaudeConfigSchema.parse({ enabled: true, model: 'scripted', endpoint: { baseUrl, apiKey: KEY } });
    const launch = describeClaudeLaunch(config, cli, {
      cwd: join(dir, 'ws'),
      home,
      session: { mode: 'new', id: randomUUID() },
      model: 'scripted',
      effort: undefined,
      hostEnv: {},
    });
    this.#child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: home, ...launch.env },
    });
    this.#child.stderr.resume();
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      for (const waiter of [...this.#waiters]) {
        if (!waiter.match(message)) continue;
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  }

  static async start(cli: ResolvedCli, dir: string, baseUrl: string): Promise<RawClaude> {
    await mkdir(join(dir, 'ws'), { recursive: true });
    await mkdir(join(dir, 'home', '.claude'), { recursive: true });
    return new RawClaude(cli, dir, baseUrl);
  }

  // Resolves on the first stdout message `match` accepts after this call.
  next(match: (m: Record<string, unknown>) => boolean): Promise<void> {
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  send(message: unknown): void {
    this.#child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async initialize(): Promise<void> {
    const answered = this.next((m) => m.type === 'control_response');
    this.send({ type: 'control_request', request_id: 'init', request: { subtype: 'initialize' } });
    await answered;
  }

  prompt(text: string): void {
    this.send({ type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: [{ type: 'text', text }] } });
  }

  async turn(text: string): Promise<void> {
    const done = this.next((m) => m.type === 'result');
    this.prompt(text);
    await done;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.stdin.end();
    await exited;
  }
}

async function rawStartup(cli: ResolvedCli, dir: string, baseUrl: string): Promise<number> {
  const t0 = performance.now();
  const client = await RawClaude.start(cli, dir, baseUrl);
  try {
    await client.initialize();
    const init = client.next((m) => m.type === 'system' && m.subtype === 'init');
    const done = client.next((m) => m.type === 'result');
    client.prompt('hello');
    await init;
    const ms = performance.now() - t0;
    await done;
    return ms;
  } finally {
    await client.close();
  }
}

async function rawTurnTimes(cli: ResolvedCli, dir: string, baseUrl: string, turns: number): Promise<number[]> {
  const client = await RawClaude.start(cli, dir, baseUrl);
  try {
    await client.initialize();
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
  const config = ClaudeConfigSchema.parse({
    enabled: true,
    cli: { version: VERSION },
    model: 'scripted',
    endpoint: { baseUrl, apiKey: KEY },
  });
  const cli = await claudeCodeAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
  const runner = await SessionRunner.create(
    {
      store,
      stateDir: join(dir, 'state'),
      adapter: claudeCodeAdapter as never,
      adapterConfig: config,
      cli,
      secrets: [KEY],
      decide: async () => ({ decision: 'allow', by: 'policy' }),
      interruptGraceMs: 2000,
      runTimeoutMs: 60_000,
    },
    { workspace: join(dir, 'ws'), model: 'scripted', autonomy: 'low' },
  );
  try {
    await runner.runTurn('warm up');
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      const t0 = performance.now();
      const outcome = await runner.runTurn(`turn ${t}`);
      if (outcome.status !== 'completed') throw new Error(`claude-code bench turn ${t} ended ${outcome.status} (${outcome.reason})`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await runner.close();
    await store.releaseOwner();
  }
}

async function writeClaudeConfig(dir: string, baseUrl: string): Promise<string> {
  await mkdir(join(dir, 'ws'), { recursive: true });
  const path = join(dir, 'one-works.yaml');
  await writeFile(
    path,
    [
      `state: { directory: ${join(dir, 'state')} }`,
      `cache: { directory: ${CACHE} }`,
      `workspaces: { approved: [${join(dir, 'ws')}] }`,
      'adapters:',
      '  claude-code:',
      '    enabled: true',
      `    cli: { source: managed, version: ${VERSION} }`,
      '    model: scripted',
      `    endpoint: { baseUrl: "${baseUrl}", apiKey: "${KEY}" }`,
      '',
    ].join('\n'),
  );
  return path;
}
