import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// `one-works run` is a client of the state directory's orchestrator, which it starts in the
// background when none runs: concurrent runs share it and its limits, Ctrl-C cancels through it.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;

const ownerPid = async (rig: CliRig): Promise<number> =>
  (JSON.parse(await readFile(join(rig.stateDir, 'owner.json'), 'utf8')) as { pid: number }).pid;
const parentPid = (pid: number): number => Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

async function dirs(rig: CliRig, ...names: string[]): Promise<string[]> {
  const paths = names.map((name) => join(rig.workspace, name));
  await Promise.all(paths.map((path) => mkdir(path)));
  return paths;
}

describe('one-works run through the orchestrator', () => {
  it('two runs started at the same moment share one orchestrator; with one slot the second turn starts after the first ended', async () => {
    const model = await rigs.model({
      steps: byPrompt({ 'job one': () => ({ text: 'one done' }), 'job two': () => ({ text: 'two done' }) }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { maxConcurrentRuns: 1 }, droid: RUNS_COMMANDS });
    const [a, b] = await dirs(rig, 'a', 'b');
    const [one, two] = await Promise.all([rig.run(['run', '-w', a!, 'job one']), rig.run(['run', '-w', b!, 'job two'])]);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(two.exitCode, two.stderr).toBe(0);
    expect(one.stdout).toContain('one done');
    expect(two.stdout).toContain('two done');

    const runs = await Promise.all((await rig.sessionIds()).map(async (id) => (await rig.readSession(id)).runs));
    expect(runs.map((r) => r.map((run) => run.status))).toEqual([['completed'], ['completed']]);
    const [first, second] = runs.map((r) => r[0]!).sort((x, y) => x.startedAt!.localeCompare(y.startedAt!));
    expect(second!.startedAt! >= first!.endedAt!).toBe(true);
    // Whichever client spawned a server first, exactly one served (a loser exits quietly).
    const log = await readFile(join(rig.stateDir, 'orchestrator.log'), 'utf8');
    expect(log.match(/orchestrator serving/g)).toHaveLength(1);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('runs through a `one-works serve` that is already up, without starting another', async () => {
    const model = await rigs.model({ steps: [{ text: 'served' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = rig.start(['serve']);
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
    const result = await rig.run(['run', '-w', rig.workspace, 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('served');
    expect(rig.servers().map((p) => p.pid)).toEqual([server.pid]);
    expect(await ownerPid(rig)).toBe(server.pid);
    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
  });

  it('Ctrl-C cancels the turn through the orchestrator: interrupted, exit 130, no droid left', async () => {
    const model = await rigs.model({ steps: [executeStep('call_shared_int_1', 'sleep 3031'), { text: 'never reached' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const cli = rig.start(['run', '-w', rig.workspace, 'sleep a while']);
    await until(() => rig.processes().some((p) => p.args === 'sleep 3031'));
    // droid is the orchestrator's child, not the CLI's.
    const droid = rig.processes().find((p) => p.args.includes(' exec --input-format stream-jsonrpc'))!;
    expect(rig.servers().map((p) => p.pid)).toContain(parentPid(droid.pid));
    expect(parentPid(droid.pid)).not.toBe(cli.pid);
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    expect(result.stderr).toContain('interrupting the turn');
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'interrupted' });
    expect(record.status).toBe('idle');
    // `run` exits once its interrupted turn has settled; the orchestrator closes droid right after
    // (issue 15), so droid's exit is waited for (bounded), as in run-orphans, not probed once.
    expect(await waitForExit([droid.pid], AGENT_CLOSE_MS)).toEqual([]);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('sessions list shows the queue depth of a session whose turn waits for a slot, and reads the store when no orchestrator runs', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'long job': (request) => (toolResults(request).length > 0 ? { text: 'slept' } : executeStep('call_shared_long_1', 'sleep 3032')),
        'job B': () => ({ text: 'B done' }),
      }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { maxConcurrentRuns: 1 }, droid: RUNS_COMMANDS });
    const [a, b] = await dirs(rig, 'a', 'b');
    const long = await rig.run(['run', '--detach', '-w', a!, 'long job']);
    expect(long.exitCode, long.stderr).toBe(0);
    const longId = long.stdout.trim();
    await until(() => rig.processes().some((p) => p.args === 'sleep 3032'));
    const queued = await rig.run(['run', '--detach', '-w', b!, 'job B']);
    expect(queued.exitCode, queued.stderr).toBe(0);
    const queuedId = queued.stdout.trim();

    const list = await rig.run(['--json', 'sessions', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = list.stdout
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; status: string; queueDepth: number; lastRun: { status: string } });
    expect(rows.find((r) => r.id === longId)).toMatchObject({ status: 'working', queueDepth: 0, lastRun: { status: 'running' } });
    expect(rows.find((r) => r.id === queuedId)).toMatchObject({ queueDepth: 1, lastRun: { status: 'queued' } });
    expect((await rig.run(['sessions', 'list'])).stdout).toMatch(new RegExp(`${queuedId} .* queue 1 `));

    // Cancelling the long turn frees the slot; the queued one runs, then the server goes idle.
    // Its pid is read while it surely runs: once idle it may exit (and remove owner.json) at once.
    const server = await ownerPid(rig);
    expect((await rig.run(['cancel', longId])).exitCode).toBe(0);
    expect((await rig.run(['wait', queuedId, '--timeout', '120'])).exitCode).toBe(0);
    expect(await waitForExit([server], 15_000)).toEqual([]);

    // Without an orchestrator, reading does not start one.
    const offline = await rig.run(['--json', 'sessions', 'list']);
    expect(offline.exitCode, offline.stderr).toBe(0);
    expect(
      offline.stdout.split('\n').map((line) => JSON.parse(line) as { id: string; queueDepth: number; lastRun: { status: string } }),
    ).toEqual([
      expect.objectContaining({ id: expect.any(String), queueDepth: 0 }),
      expect.objectContaining({ id: expect.any(String), queueDepth: 0 }),
    ]);
    expect((await rig.readSession(queuedId)).runs[0]?.status).toBe('completed');
    expect(rig.servers()).toEqual([]);
  });
});
