import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { TSX_LOADER } from '../peers/fake-droid-binary.js';
import { adapterModules, ROOT } from '../support/module-log.js';
import { untilServing, useServeChild } from '../support/serve-ready.js';

// Issue 15: `run` loads only the adapter of its turn; the orchestrator loads the default adapter
// (droid here) in idle time once it listens, and any other adapter with its first session. Both
// processes run from the sources with module hooks that log every module each loads (one log per
// process id); a turn on `process:fake` (the process runner driving test/peers/fake-runner.ts)
// must leave Claude Code, Codex and the ACP adapters (and the ACP SDK) unloaded in both, and droid
// in the client, apart from their config schemas (one-works.yaml is validated whole).
const FIXTURE = fileURLToPath(new URL('../fixtures/module-log/', import.meta.url));
const FAKE_RUNNER = fileURLToPath(new URL('../peers/fake-runner.ts', import.meta.url));
const READY_MS = 60_000;
/** Deadline of the `run` client (sources through tsx, a loaded CI machine). */
const RUN_MS = 90_000;

const current = useServeChild();

async function readLog(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter(Boolean);
}

describe('one-works run', () => {
  it('the client loads only its adapter; the orchestrator the default one in idle time, then only its session’s one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-run-modules-'));
    current.dir = dir;
    const workspace = join(dir, 'ws');
    const logs = join(dir, 'logs');
    await mkdir(workspace);
    await mkdir(logs);
    const config = join(dir, 'one-works.yaml');
    await writeFile(
      config,
      stringify({
        state: { directory: join(dir, 'state') },
        cache: { directory: join(dir, 'cache') },
        workspaces: { approved: [workspace] },
        orchestrator: { keepWarmMs: 0 },
        adapters: {
          process: {
            enabled: true,
            harnesses: { fake: { command: process.execPath, args: ['--import', TSX_LOADER, FAKE_RUNNER, 'none'] } },
          },
        },
      }),
    );
    // Server and client share one environment (the client uses only a server with its own).
    const env = { MODULE_LOG_FILE: join(logs, '%p.log'), HOME: dir, PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const node = (args: string[]) => [
      '--import',
      'tsx',
      '--import',
      join(FIXTURE, 'register.mjs'),
      join(FIXTURE, 'run-cli.ts'),
      '--config',
      config,
      ...args,
    ];
    const serve = execa(process.execPath, node(['serve']), { cwd: ROOT, env, extendEnv: false, reject: false, stdin: 'ignore' });
    current.server = serve;
    await untilServing(serve, READY_MS);
    const serverLog = join(logs, `${serve.pid}.log`);
    // The default adapter's code loads in idle time, before any session asks for it.
    let atStart = await readLog(serverLog);
    for (let waited = 0; waited < READY_MS && !adapterModules(atStart).includes('droid/index.ts'); waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      atStart = await readLog(serverLog);
    }
    // The log sees the orchestrator's own modules load.
    expect(atStart.some((url) => url.endsWith('/cli/daemon/serve-main.ts'))).toBe(true);
    expect(adapterModules(atStart)).toContain('droid/index.ts');
    expect(adapterModules(atStart).filter((path) => !path.startsWith('droid/'))).toEqual([]);
    // Nor the clients' command modules (`serve` has a module of its own), nor execa (and its ~150
    // modules): the server runs no one-shot command at start (no bwrap check, no git).
    expect(atStart.filter((url) => /\/cli\/commands\/(?!serve\.ts)|\/cli\/fleet\/(?!backend\.ts)/.test(url))).toEqual([]);
    expect(atStart.filter((url) => /\/node_modules\/execa\//.test(url))).toEqual([]);

    const result = await execa(process.execPath, node(['run', '--adapter', 'process:fake', '--workspace', workspace, 'hello']), {
      cwd: ROOT,
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: RUN_MS,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('fake reply');

    const clientLogs = (await readdir(logs)).filter((name) => name !== `${serve.pid}.log`);
    // One client process (the server it used was the one started above: no other was auto-started).
    expect(clientLogs).toHaveLength(1);
    const client = await readLog(join(logs, clientLogs[0]!));
    expect(client.some((url) => url.endsWith('/cli/commands/run.ts'))).toBe(true);
    const clientAdapters = adapterModules(client);
    expect(clientAdapters).toContain('process-runner/index.ts');
    expect(clientAdapters.filter((path) => !path.startsWith('process-runner/'))).toEqual([]);
    // (the process runner's own MCP client may load with it; the ACP SDK comes only with ACP adapters)
    expect(client.filter((url) => /@agentclientprotocol/.test(url))).toEqual([]);
    // The client spawns nothing: no execa (and its ~150 modules), which the process barrel pulled in.
    expect(client.filter((url) => /\/node_modules\/execa\//.test(url))).toEqual([]);

    const served = adapterModules(await readLog(serverLog));
    expect(served).toContain('process-runner/index.ts');
    expect(served.filter((path) => !path.startsWith('process-runner/') && !path.startsWith('droid/'))).toEqual([]);
    expect((await readLog(serverLog)).filter((url) => /@agentclientprotocol/.test(url))).toEqual([]);
  }, 180_000);
});
