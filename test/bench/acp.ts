import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import { GeminiConfigSchema } from '../../adapters/acp/config.js';
import { DroidAcpConfigSchema, describeDroidAcp, droidAcpAdapter } from '../../adapters/acp/droid-acp.js';
import { describeGeminiLaunch, geminiAdapter } from '../../adapters/acp/gemini.js';
import type { Adapter, LaunchSpec, ResolvedCli, SeedFile } from '../../core/adapter.js';
import { createPrepareServices } from '../../core/install/index.js';
import { SessionRunner } from '../../core/session/index.js';
import { createFileStore } from '../../core/store/index.js';
import { startScriptedGemini } from '../support/scripted-gemini.js';
import { droidCustomModel, startScriptedModel } from '../support/scripted-model.js';

/**
 * The ACP adapters' part of `npm run bench`: per text turn over N turns, One Works (SessionRunner
 * as a library) against a raw ACP client on the SDK's ClientSideConnection driving the SAME
 * binary with the SAME launch (describeGeminiLaunch / describeDroidAcp: argv, environment, seeded
 * files) and the SAME scripted model, in the same run, as ratios (never asserted):
 *  - gemini: Gemini CLI 0.61.0 against the scripted Gemini server;
 *  - droid-acp: droid 0.225.2 in ACP mode against the scripted chat-completions server, beside
 *    the stream-jsonrpc droid adapter's own per-turn ratio in the same run.
 */

const CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));
const KEY = 'sk-bench-acp';

type Report = (name: string, oneWorks: number[], raw: number[], goal: string) => void;

export async function benchAcp(root: string, turns: number, report: Report): Promise<void> {
  const gemini = await startScriptedGemini({ steps: Array.from({ length: 10_000 }, (_, i) => ({ text: `reply ${i}` })) });
  try {
    const config = GeminiConfigSchema.parse({
      enabled: true,
      cli: { version: '0.61.0' },
      model: 'scripted',
      endpoint: { baseUrl: gemini.baseUrl, apiKey: KEY },
    });
    const cli = await geminiAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
    const raw = await rawTurns(join(root, 'gemini-raw'), turns, 'gemini-api-key', (ws, home) =>
      describeGeminiLaunch(config, { workspace: ws, home, model: undefined }, cli.binaryPath, {}),
    );
    const ow = await oneWorksTurns(join(root, 'gemini-ow'), turns, geminiAdapter as never, config, cli);
    report(`gemini: per text turn over ${turns} turns (ms)`, ow, raw, 'n/a');
  } finally {
    await gemini.close();
  }

  const model = await startScriptedModel({ steps: Array.from({ length: 10_000 }, (_, i) => ({ text: `reply ${i}` })) });
  try {
    const { entry, modelId } = droidCustomModel(model.baseUrl, { apiKey: KEY });
    const config = DroidAcpConfigSchema.parse({
      enabled: true,
      model: modelId,
      env: { FACTORY_AIRGAP_ENABLED: 'true' },
      customModels: [entry],
    });
    const cli = await droidAcpAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
    const raw = await rawTurns(join(root, 'droid-acp-raw'), turns, undefined, (ws, home) =>
      describeDroidAcp(config, { workspace: ws, home }, cli.binaryPath),
    );
    const ow = await oneWorksTurns(join(root, 'droid-acp-ow'), turns, droidAcpAdapter as never, config, cli);
    report(`droid-acp: per text turn over ${turns} turns (ms)`, ow, raw, 'n/a');
  } finally {
    await model.close();
  }
}

// A minimal ACP client: the adapter's launch spawned directly (seed files written into HOME),
// initialize, authenticate when asked, session/new, one warm-up prompt, then N timed prompts.
async function rawTurns(
  dir: string,
  turns: number,
  authMethod: string | undefined,
  describe: (workspace: string, home: string) => { launch: LaunchSpec; seed: SeedFile[] },
): Promise<number[]> {
  const ws = join(dir, 'ws');
  const home = join(dir, 'home');
  await mkdir(ws, { recursive: true });
  const { launch, seed } = describe(ws, home);
  for (const file of seed) {
    const path = join(home, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content);
    if (file.mode !== undefined) await chmod(path, file.mode);
  }
  const child: ChildProcess = spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: home, ...launch.env },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    );
    const client: acp.Client = {
      requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }),
      sessionUpdate: async () => undefined,
    };
    const conn = new acp.ClientSideConnection(() => client, stream);
    const init = await conn.initialize({
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    if (authMethod && init.authMethods?.some((m) => m.id === authMethod)) await conn.authenticate({ methodId: authMethod });
    const { sessionId } = await conn.newSession({ cwd: ws, mcpServers: [] });
    const prompt = async (text: string) => {
      const result = await conn.prompt({ sessionId, prompt: [{ type: 'text', text }] });
      if (result.stopReason !== 'end_turn') throw new Error(`raw ACP turn ended ${result.stopReason}`);
    };
    await prompt('warm up');
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      const t0 = performance.now();
      await prompt(`turn ${t}`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

async function oneWorksTurns(dir: string, turns: number, adapter: Adapter<never>, config: unknown, cli: ResolvedCli): Promise<number[]> {
  const store = await createFileStore(join(dir, 'state'));
  await store.acquireOwner({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() });
  await mkdir(join(dir, 'ws'), { recursive: true });
  const runner = await SessionRunner.create(
    {
      store,
      stateDir: join(dir, 'state'),
      adapter,
      adapterConfig: config as never,
      cli,
      secrets: [KEY],
      decide: async () => ({ decision: 'allow', by: 'policy' }),
      interruptGraceMs: 2000,
      runTimeoutMs: 60_000,
    },
    { workspace: join(dir, 'ws'), autonomy: 'low' },
  );
  try {
    await runner.runTurn('warm up');
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      const t0 = performance.now();
      const outcome = await runner.runTurn(`turn ${t}`);
      if (outcome.status !== 'completed') throw new Error(`${adapter.name} bench turn ${t} ended ${outcome.status} (${outcome.reason})`);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await runner.close();
    await store.releaseOwner();
  }
}
