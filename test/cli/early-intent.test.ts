import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tellIntent } from '../../cli/commands/run-intent.js';
import { registerRunCommands, type TurnFlags } from '../../cli/commands/run.js';
import type { AutoServer, ServerPlace } from '../../cli/daemon/auto-start.js';
import {
  type DelegateIo,
  delegateStartedRun,
  EARLY_INTENT_ID,
  type EarlyDeps,
  intentOf,
  retireServer,
  scanRunArgs,
  tellEarlyIntent,
} from '../../cli/early-intent.js';
import type { SessionIntent } from '../../core/orchestrator/intent.js';
import { lostTurnLines } from '../../cli/lost-turn.js';
import { createProgram, type GlobalOptions } from '../../cli/main.js';
import { type FakeOrchestrator, fakeOrchestrator, until } from '../support/fake-orchestrator-socket.js';

// `run` tells its intent from cli/bin.cjs before the command's bundle loads (cli/early-intent.ts),
// reading the command line itself; the command then takes that connection over (run-intent.ts).

// What the command's own parser (commander, with the real program and `run` command) reads from
// `args`: the config flag, the intent's flags and the prompt; `error` when it refuses the line.
async function commanderRead(args: string[]): Promise<{ config: string | undefined; flags: TurnFlags; prompt: string } | 'error'> {
  const program = createProgram().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  registerRunCommands(program, async () => undefined);
  let read: { config: string | undefined; flags: TurnFlags; prompt: string } | undefined;
  program.hook('preAction', (_program, action) => {
    read = {
      config: action.optsWithGlobals<GlobalOptions>().config,
      flags: action.opts<TurnFlags>(),
      prompt: action.args[0]!,
    };
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch {
    return 'error';
  }
  return read ?? 'error';
}

// A server start that records what it was asked and starts nothing: `exit` settles its exit code.
function recordingStart(
  startedAt = Date.now(),
): EarlyDeps & { started: Array<{ place: ServerPlace; intent: SessionIntent }>; exit(code: number): void } {
  let exit: (code: number) => void = () => undefined;
  const exited = new Promise<number | null>((resolve) => {
    exit = resolve;
  });
  const started: Array<{ place: ServerPlace; intent: SessionIntent }> = [];
  return {
    started,
    exit: (code) => exit(code),
    startServer: (place, intent): AutoServer => {
      started.push({ place, intent });
      return { pid: undefined, exited, logOffset: 0, startedAt };
    },
  };
}

// A server start that fails (a state directory that cannot be made).
const failingStart: EarlyDeps = {
  startServer: () => {
    throw new Error('EACCES');
  },
};

const CWD = '/home/someone/project';
const ENV = { TERM: 'xterm-256color', NO_COLOR: '1' };

describe('scanRunArgs: the early read of a run command line', () => {
  // Lines the early read takes: it must read each as the command does.
  const taken = [
    ['run', 'hello'],
    ['--config', '/etc/ow.yaml', 'run', 'hello'],
    ['-c', 'ow.yaml', 'run', '-w', 'sub', 'hello'],
    ['run', 'hello', '--config', 'late.yaml'],
    ['run', '--config=eq.yaml', '--workspace=/ws', 'hi'],
    ['run', '-w', '/ws', '-m', 'model-x', '-e', 'high', '-a', 'medium', '-t', 'A title', '-A', 'droid', 'do it'],
    ['run', '--model', 'm', '--effort', 'low', '--autonomy', 'off', '--title', 't', '--adapter', 'codex', 'go'],
    ['--json', 'run', '--verbose', '-d', '--no-hint', '--request-key', 'k1', 'hi'],
    ['run', '-w', 'first', '-w', 'second', 'hi'],
    ['run', '--title=', 'empty title'],
    ['run', 'a prompt with -dashes inside'],
  ];
  it.each(taken)('reads %j as the command does', async (...args) => {
    const scanned = scanRunArgs(args);
    const read = await commanderRead(args);
    expect(read).not.toBe('error');
    expect(scanned).toBeDefined();
    if (read === 'error' || !scanned) return;
    expect(scanned.config).toBe(read.config);
    expect(scanned.prompt).toBe(read.prompt);
    expect(intentOf(scanned.flags, ENV, CWD)).toEqual(intentOf(read.flags, ENV, CWD));
  });

  // Lines left to the command: other commands, options checked first or without an early agent,
  // forms the early read does not parse.
  const left = [
    [],
    ['send', 's-0123456789', 'hello'],
    ['run'],
    ['run', 'one', 'two'],
    ['run', '--allow', 'ls', 'hello'],
    ['run', '--deny=rm', 'hello'],
    ['run', '--worktree', 'hello'],
    ['run', '--no-worktree', 'hello'],
    ['run', '--base', 'main', 'hello'],
    ['run', '--branch=b', 'hello'],
    ['run', '--include-uncommitted', 'hello'],
    ['run', '-dw', 'ws', 'hello'],
    ['run', '-wws', 'hello'],
    ['run', '-w=ws', 'hello'],
    ['run', '--', '-hello'],
    ['run', '--help'],
    ['run', '-h'],
    ['run', '-w', '-m', 'hello'],
    ['run', 'hello', '-w'],
    ['run', '--unknown', 'hello'],
    ['-V'],
  ];
  it.each(left)('leaves %j to the command', (...args) => {
    expect(scanRunArgs(args)).toBeUndefined();
  });
});

describe('tellEarlyIntent and the command taking its connection over', () => {
  let root: string | undefined;
  let fake: FakeOrchestrator | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (fake ? fake.server.close(resolve) : resolve(undefined)));
    fake = undefined;
    if (root) await rm(root, { recursive: true, force: true });
    root = undefined;
  });

  // A config naming a state directory whose socket the fake orchestrator listens on.
  async function setUp(): Promise<{ config: string; stateDir: string; ws: string }> {
    root = await mkdtemp(join(tmpdir(), 'ow-early-intent-'));
    const stateDir = join(root, 'state');
    const ws = join(root, 'ws');
    await mkdir(stateDir);
    await mkdir(ws);
    const config = join(root, 'one-works.yaml');
    await writeFile(config, `state: { directory: ${stateDir} }\nworkspaces: { approved: [${ws}] }\n`);
    fake = await fakeOrchestrator(join(stateDir, 'orchestrator.sock'));
    return { config, stateDir, ws };
  }

  it('writes the intent on a connection, which the command takes over as it is when its own intent is the same', async () => {
    const { config, stateDir, ws } = await setUp();
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, '-m', 'm1', 'hello'], ENV, root!);
    expect(seed).toBeDefined();
    await seed!.sent;
    await until(() => fake!.connections[0]?.length === 1);
    expect(fake!.connections[0]![0]).toMatchObject({ id: EARLY_INTENT_ID, method: 'intent', params: { workspace: ws, model: 'm1' } });

    const early = tellIntent({ config }, ENV, root!, { workspace: ws, model: 'm1' }, seed);
    const client = await early!.connectOptions(stateDir).early;
    expect(client).toBeDefined();
    await client!.hello();
    // One connection: the command's first request follows the early intent on it, and no intent is told again.
    expect(fake!.connections).toHaveLength(1);
    expect(fake!.connections[0]!.map((f) => f.method)).toEqual(['intent', 'hello']);
    // Closed before a createSession: the intent is dropped (its agent discarded) on that connection.
    await client!.close();
    expect(fake!.connections[0]!.map((f) => f.method)).toEqual(['intent', 'hello', 'intent.drop']);
  });

  it('tells the command’s own intent on the same connection when the command read other flags', async () => {
    const { config, stateDir, ws } = await setUp();
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!);
    await seed!.sent;
    const early = tellIntent({ config }, ENV, root!, { workspace: ws, model: 'other' }, seed);
    const client = await early!.connectOptions(stateDir).early;
    await until(() => fake!.connections[0]?.length === 2);
    expect(fake!.connections).toHaveLength(1);
    expect(fake!.connections[0]![1]).toMatchObject({ method: 'intent', params: { workspace: ws, model: 'other' } });
    await client!.close();
  });

  it('closes the early connection when the command runs with another state directory', async () => {
    const { config, ws } = await setUp();
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!);
    await seed!.sent;
    const early = tellIntent({ config }, ENV, root!, { workspace: ws }, seed);
    expect(early!.connectOptions(join(root!, 'elsewhere')).early).toBeUndefined();
    await until(() => fake!.closed === 1);
    expect(fake!.connections[0]!.map((f) => f.method)).toEqual(['intent', 'intent.drop']);
  });

  it('tells nothing for a prompt the command refuses, or when no orchestrator listens', async () => {
    const { config, ws } = await setUp();
    expect(tellEarlyIntent(['--config', config, 'run', '-w', ws, '   '], ENV, root!)).toBeUndefined();
    // A connection of the refused line would have been accepted before this one.
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!);
    await seed!.sent;
    await until(() => fake!.connections[0]?.length === 1);
    expect(fake!.connections).toHaveLength(1);
    expect(fake!.connections[0]![0]!.params).toMatchObject({ workspace: ws });
    await seed!.discard();
    await new Promise<void>((resolve) => fake!.server.close(() => resolve()));
    fake = undefined;
    const none = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!, failingStart);
    expect(none?.listening).toBe(false);
    expect(await none?.socket).toBeUndefined();
  });

  it('without a socket, starts the server with the intent, and the command waits for that one instead of starting one', async () => {
    const { config, stateDir, ws } = await setUp();
    await new Promise<void>((resolve) => fake!.server.close(() => resolve()));
    fake = undefined;
    const start = recordingStart();
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, '-m', 'm1', 'hello'], ENV, root!, start);
    expect(seed?.listening).toBe(false);
    expect(start.started).toEqual([
      { place: { stateDir, configPath: config, cwd: root!, env: ENV }, intent: intentOf({ workspace: ws, model: 'm1' }, ENV, root!) },
    ]);
    const early = tellIntent({ config }, ENV, root!, { workspace: ws, model: 'm1' }, seed);
    const options = early!.connectOptions(stateDir);
    expect(options.spawned).toBe(seed!.server);
    expect(options.intent).toEqual(start.started[0]!.intent);
    // Used: closing the command's early intent leaves the server to the connection that waits for it.
    await early!.close();
    expect(start.started).toHaveLength(1);
  });

  it('asks the server it started to exit when the command does not use it (unused), on a connection of its own', async () => {
    const { config, stateDir, ws } = await setUp();
    await new Promise<void>((resolve) => fake!.server.close(() => resolve()));
    const start = recordingStart();
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!, start);
    const early = tellIntent({ config }, ENV, root!, { workspace: ws }, seed);
    // The command failed before it connected (e.g. its config): the server, serving by then, is asked to exit.
    fake = await fakeOrchestrator(join(stateDir, 'orchestrator.sock'));
    await early!.close();
    expect(fake.connections).toEqual([[{ jsonrpc: '2.0', id: 'early-retire', method: 'exitIfIdle', params: { reason: 'unused' } }]]);
  });

  it('asks that server to exit when the command runs with another state directory', async () => {
    const { config, stateDir, ws } = await setUp();
    await new Promise<void>((resolve) => fake!.server.close(() => resolve()));
    const start = recordingStart();
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!, start);
    const early = tellIntent({ config }, ENV, root!, { workspace: ws }, seed);
    fake = await fakeOrchestrator(join(stateDir, 'orchestrator.sock'));
    expect(early!.connectOptions(join(root!, 'elsewhere')).spawned).toBeUndefined();
    await early!.close();
    expect(fake.connections.map((frames) => frames.map((f) => f.method))).toEqual([['exitIfIdle']]);
  });

  it('when the server it started fails (the command failed the same way), removes the state directory made for it', async () => {
    root = await mkdtemp(join(tmpdir(), 'ow-early-intent-'));
    const stateDir = join(root, 'state');
    const config = join(root, 'one-works.yaml');
    await writeFile(config, `state: { directory: ${stateDir} }\n`);
    const start = recordingStart();
    const seed = tellEarlyIntent(['--config', config, 'run', 'hello'], ENV, root, start);
    expect(seed?.server).toBeDefined();
    // What spawnAutoServer makes: the directory and the server's log.
    await mkdir(stateDir);
    await writeFile(join(stateDir, 'orchestrator.log'), 'one-works: config_invalid\n');
    start.exit(2);
    await seed!.discard();
    expect(existsSync(stateDir)).toBe(false);
  });

  it('leaves a state directory that was there before, with the failed server’s log', async () => {
    const stateDir = join(await mkdtemp(join(tmpdir(), 'ow-early-intent-')), 'state');
    root = dirname(stateDir);
    await mkdir(stateDir);
    await writeFile(join(stateDir, 'orchestrator.log'), 'one-works: config_invalid\n');
    let exit: (code: number) => void = () => undefined;
    const server: AutoServer = { pid: undefined, exited: new Promise((resolve) => (exit = resolve)), logOffset: 0, startedAt: Date.now() };
    const retired = retireServer(server, stateDir, false);
    exit(2);
    await retired;
    expect(await readFile(join(stateDir, 'orchestrator.log'), 'utf8')).toBe('one-works: config_invalid\n');
  });

  it('without a socket and with no server started at the early tell, the command looks again and tells its intent to a server listening by then', async () => {
    const { config, stateDir, ws } = await setUp();
    await new Promise<void>((resolve) => fake!.server.close(() => resolve()));
    const seed = tellEarlyIntent(['--config', config, 'run', '-w', ws, 'hello'], ENV, root!, failingStart);
    expect(seed?.listening).toBe(false);
    expect(seed?.server).toBeUndefined();
    fake = await fakeOrchestrator(join(stateDir, 'orchestrator.sock'));
    const early = tellIntent({ config }, ENV, root!, { workspace: ws }, seed);
    const client = await early!.connectOptions(stateDir).early;
    await until(() => fake!.connections[0]?.length === 1);
    expect(fake!.connections[0]![0]).toMatchObject({ id: 'c1', method: 'intent', params: { workspace: ws } });
    await client!.close();
  });

  describe('delegateStartedRun: a run handed to the server its early intent started', () => {
    // A config and workspace with no server listening: tellEarlyIntent starts one (recorded, not spawned).
    async function started(args: (config: string, ws: string) => string[], startedAt?: number) {
      root = await mkdtemp(join(tmpdir(), 'ow-delegate-started-'));
      const stateDir = join(root, 'state');
      const ws = join(root, 'ws');
      await mkdir(ws);
      const config = join(root, 'one-works.yaml');
      await writeFile(config, `state: { directory: ${stateDir} }\nworkspaces: { approved: [${ws}] }\n`);
      const start = recordingStart(startedAt);
      const line = args(config, ws);
      const seed = tellEarlyIntent(line, ENV, root, start);
      expect(seed?.server).toBeDefined();
      return { start, seed, line, stateDir, ws, socket: join(stateDir, 'orchestrator.sock') };
    }

    // A client's streams as a pipe (no terminal), recording what is written.
    function pipeIo(terminal = false): DelegateIo & { out: string[]; err: string[] } {
      const out: string[] = [];
      const err: string[] = [];
      return {
        out,
        err,
        stdout: { write: (text: string) => out.push(text), isTTY: terminal },
        stderr: { write: (text: string) => err.push(text), isTTY: terminal },
        stdin: { isTTY: terminal },
        onSignal: () => () => undefined,
      };
    }

    it('waits for that server to listen, then hands it the command without telling the intent again', async () => {
      const { seed, line, socket, stateDir } = await started((config, ws) => ['--config', config, 'run', '-w', ws, 'hello']);
      const io = pipeIo();
      const handed = delegateStartedRun(seed, line, ENV, root!, io);
      expect(handed).toBeDefined();
      // The server listens some time after its start (its own start-up, then its intent's agent).
      await new Promise((resolve) => setTimeout(resolve, 50));
      await mkdir(stateDir, { recursive: true });
      fake = await fakeOrchestrator(socket, { commandRun: { output: 'the answer\n', exitCode: 0 } });
      expect(await handed).toBe(0);
      expect(io.out).toEqual(['the answer\n']);
      expect(io.err).toEqual([]);
      // One connection, the command alone on it: the server runs it on the agent of the intent it was started with.
      expect(fake.connections.map((frames) => frames.map((f) => f.method))).toEqual([['command.run']]);
      expect(fake.connections[0]![0]!.params).toMatchObject({ args: line, cwd: root, env: ENV });
    });

    it('on a loaded machine, keeps waiting for that server, saying so on stderr after 3 s as the command would', async () => {
      // Spawned 4 s ago and not listening yet (the CI runner once took over 3 s to start one).
      const { seed, line, socket, stateDir } = await started(
        (config, ws) => ['--config', config, 'run', '-w', ws, 'hello'],
        Date.now() - 4_000,
      );
      const io = pipeIo();
      const handed = delegateStartedRun(seed, line, ENV, root!, io);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await mkdir(stateDir, { recursive: true });
      fake = await fakeOrchestrator(socket, { commandRun: { output: 'the answer\n', exitCode: 0 } });
      expect(await handed).toBe(0);
      expect(io.out).toEqual(['the answer\n']);
      expect(io.err).toEqual([
        `waiting for the background orchestrator (pid undefined) to start, 4 s so far (its output: ${join(stateDir, 'orchestrator.log')})\n`,
      ]);
      expect(fake.connections.map((frames) => frames.map((f) => f.method))).toEqual([['command.run']]);
    });

    it('leaves the command to this process when that server runs without listening 60 s after its spawn', async () => {
      const { seed, line } = await started((config, ws) => ['--config', config, 'run', '-w', ws, 'hello'], Date.now() - 60_000);
      const io = pipeIo();
      expect(await delegateStartedRun(seed, line, ENV, root!, io)).toBeUndefined();
      expect([...io.out, ...io.err]).toEqual([]);
    });

    it('leaves the command to this process when that server exits before it listens', async () => {
      const { start, seed, line } = await started((config, ws) => ['--config', config, 'run', '-w', ws, 'hello']);
      const io = pipeIo();
      const handed = delegateStartedRun(seed, line, ENV, root!, io);
      start.exit(2);
      expect(await handed).toBeUndefined();
      expect([...io.out, ...io.err]).toEqual([]);
    });

    it('leaves the command to this process when that server declines it, with nothing printed', async () => {
      const { seed, line, socket, stateDir } = await started((config, ws) => ['--config', config, 'run', '-w', ws, 'hello']);
      await mkdir(stateDir, { recursive: true });
      fake = await fakeOrchestrator(socket);
      const io = pipeIo();
      expect(await delegateStartedRun(seed, line, ENV, root!, io)).toBeUndefined();
      expect(fake.connections.map((frames) => frames.map((f) => f.method))).toEqual([['command.run']]);
      expect([...io.out, ...io.err]).toEqual([]);
    });

    it('when that server goes away during the turn it names, says what happened and what to do, as the command does, and exits 5', async () => {
      for (const json of [false, true]) {
        const { seed, line, socket, stateDir } = await started((config, ws) => [
          '--config',
          config,
          ...(json ? ['--json'] : []),
          'run',
          '-w',
          ws,
          'hello',
        ]);
        await mkdir(stateDir, { recursive: true });
        const turn = { sessionId: 's-0123456789', runId: 'r1', pid: 4242 };
        fake = await fakeOrchestrator(socket, { commandRun: { output: 'started\n', exitCode: 0, turn, close: true } });
        const io = pipeIo();
        expect(await delegateStartedRun(seed, line, ENV, root!, io)).toBe(5);
        expect(io.out).toEqual(['started\n']);
        const message = lostTurnLines(turn).join('\n');
        expect(message).toContain('the orchestrator (pid 4242) stopped while it ran turn r1 of session s-0123456789');
        expect(io.err).toEqual([
          json ? `${JSON.stringify({ error: { code: 'connection_closed', message } })}\n` : `one-works: ${message}\n`,
        ]);
        await new Promise((resolve) => fake!.server.close(resolve));
        fake = undefined;
        await rm(root!, { recursive: true, force: true });
      }
    });

    it('hands nothing over at a terminal that could show prompts, with ONE_WORKS_DELEGATE=0, or without a server it started', async () => {
      const { seed, line } = await started((config, ws) => ['--config', config, 'run', '-w', ws, 'hello']);
      expect(delegateStartedRun(seed, line, ENV, root!, pipeIo(true))).toBeUndefined();
      expect(delegateStartedRun(seed, line, { ...ENV, ONE_WORKS_DELEGATE: '0' }, root!, pipeIo())).toBeUndefined();
      expect(delegateStartedRun({ ...seed!, server: undefined }, line, ENV, root!, pipeIo())).toBeUndefined();
      expect(delegateStartedRun(undefined, line, ENV, root!, pipeIo())).toBeUndefined();
    });
  });
});
