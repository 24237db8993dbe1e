import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tryConnect } from '../../cli/daemon/client.js';
import type { SessionRecord } from '../../core/store/index.js';
import { writeFakeDroidBinary } from '../peers/fake-droid-binary.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, processesReferring, type CliSandbox } from '../support/cli-runner.js';
import { startOneWorks, type StartedCli } from '../support/one-works-cli.js';
import { killQuietly } from '../support/rig-processes.js';

// Issue 18 items 1, 6, 7 and 8 through the real `one-works` command, with the fake droid.

let box: CliSandbox;
let stateDir: string;
const started: StartedCli[] = [];
const others: ChildProcess[] = [];

beforeEach(async () => {
  box = await createCliSandbox();
  stateDir = join(box.root, 'state');
});
afterEach(async () => {
  for (const child of others.splice(0)) child.kill('SIGKILL');
  for (const cli of started.splice(0)) {
    cli.kill('SIGCONT');
    cli.kill('SIGTERM');
    await cli.result.catch(() => undefined);
  }
  for (const left of processesReferring(box.root)) killQuietly(left.pid);
  await box.remove();
});

async function configure(): Promise<void> {
  const dir = join(box.root, 'fake');
  await mkdir(dir);
  const binary = await writeFakeDroidBinary(dir);
  await box.writeConfig(
    [
      `state:\n  directory: ${stateDir}`,
      `cache:\n  directory: ${join(box.root, 'cache')}`,
      `workspaces:\n  approved: [${box.cwd}]`,
      'orchestrator:\n  idleExitMs: 300',
      'adapters:',
      '  droid:',
      `    cli:\n      source: path\n      path: ${binary}\n      version: 0.225.2`,
      '    credentials:\n      FACTORY_TOKEN: ft-token-18a1',
      '',
    ].join('\n'),
  );
}

async function newSession(): Promise<string> {
  const first = await box.run(['--json', 'run', 'hello']);
  expect(first.exitCode, first.stderr).toBe(0);
  return (JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { sessionId: string }).sessionId;
}

const recordFile = (id: string): string => join(stateDir, 'sessions', id, 'session.json');
const readRecord = async (id: string): Promise<SessionRecord> => JSON.parse(await readFile(recordFile(id), 'utf8')) as SessionRecord;

// The auto-started server exits 300 ms after its last client; wait until it is gone.
async function noServer(): Promise<void> {
  const serving = (): boolean => processesReferring(box.root).some((p) => / serve( |$)/.test(p.args));
  while (serving() || existsSync(join(stateDir, 'owner.json'))) await sleep(50);
}

// A bad record beside the healthy one: a hand edit with a typo, and one cut short.
async function corruptTwo(healthy: string): Promise<void> {
  const typo = { ...(await readRecord(healthy)), id: 's-typo000001', status: 'done' };
  await mkdir(join(stateDir, 'sessions', 's-typo000001'));
  await writeFile(recordFile('s-typo000001'), JSON.stringify(typo, null, 2));
  await mkdir(join(stateDir, 'sessions', 's-cut0000001'));
  await writeFile(recordFile('s-cut0000001'), (await readFile(recordFile(healthy), 'utf8')).slice(0, 120));
}

describe('one bad session record is that session alone (item 1)', { timeout: CLI_TEST_TIMEOUT_MS * 2 }, () => {
  it('sessions lists the healthy one and the bad ones as corrupt; send, doctor and the server all work', async () => {
    await configure();
    const healthy = await newSession();
    await noServer();
    await corruptTwo(healthy);

    const listed = await box.run(['sessions']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${healthy} +(?:droid +)?idle .*r1 completed`, 'm'));
    expect(listed.stdout).toMatch(/^s-typo000001 +corrupt +status: .*session\.json\)$/m);
    expect(listed.stdout).toMatch(/^s-cut0000001 +corrupt +not valid JSON: .*truncated/m);
    expect(listed.stderr).toMatch(/2 session record\(s\) cannot be read/);
    const json = (await box.run(['--json', 'sessions'])).stdout.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(json.map((row) => [row.id, row.status])).toEqual([
      [healthy, 'idle'],
      ['s-cut0000001', 'corrupt'],
      ['s-typo000001', 'corrupt'],
    ]);

    // The orchestrator starts (recovery skips the bad records) and runs the healthy session.
    const sent = await box.run(['send', healthy, 'again']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect((await readRecord(healthy)).runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    const showBad = await box.run(['sessions', 'show', 's-cut0000001']);
    expect(showBad.exitCode).toBe(6);
    expect(showBad.stderr).toMatch(/session s-cut0000001 cannot be read: .*truncated/);

    // Through the server, as MCP's find_sessions asks it: one started by hand, once the one `send`
    // started has gone (its socket would answer the wait below, and then close as it idles out).
    await noServer();
    const serve = startOneWorks(['--config', box.configPath, 'serve'], { cwd: box.cwd, env: box.env });
    started.push(serve);
    while (!existsSync(join(stateDir, 'orchestrator.sock'))) await sleep(50);
    const client = (await tryConnect(join(stateDir, 'orchestrator.sock')))!;
    try {
      expect((await client.list()).map((s) => s.sessionId)).toEqual([healthy]);
      expect((await client.corruptSessions()).map((c) => c.sessionId)).toEqual(['s-cut0000001', 's-typo000001']);
    } finally {
      await client.close();
    }

    const doctor = await box.run(['doctor']);
    expect(doctor.stdout).toMatch(/^FAIL {2}session s-typo000001: record .* is malformed: status: /m);
    expect(doctor.stdout).toMatch(/^FAIL {2}session s-cut0000001: record .* is malformed: not valid JSON/m);
    expect(await readFile(recordFile('s-typo000001'), 'utf8')).toContain('"status": "done"');
  });
});

describe('an auto-started server over a dead owner’s state and bad records', { timeout: CLI_TEST_TIMEOUT_MS * 2 }, () => {
  it('recovers the dead owner’s running run and names each malformed record once in its log, leaving it alone', async () => {
    await configure();
    const id = await newSession();
    await noServer();
    await corruptTwo(id);
    const typoText = await readFile(recordFile('s-typo000001'), 'utf8');
    // What a SIGKILLed owner leaves: the run still `running` (its turn.completed never logged), the owner file naming a dead pid.
    const record = await readRecord(id);
    await writeFile(
      recordFile(id),
      JSON.stringify({
        ...record,
        status: 'working',
        runs: [{ ...record.runs[0]!, status: 'running', reason: undefined, endedAt: undefined }],
      }),
    );
    const eventsFile = join(stateDir, 'sessions', id, 'events.jsonl');
    const lines = (await readFile(eventsFile, 'utf8')).split('\n').filter((line) => line !== '' && !line.includes('"turn.completed"'));
    await writeFile(eventsFile, `${lines.join('\n')}\n`);
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    await writeFile(join(stateDir, 'owner.json'), JSON.stringify({ pid: gone.pid, host: hostname(), startedAt: new Date().toISOString() }));

    // `run` starts the server (which recovers before the new session is created) and runs its turn.
    const ran = await box.run(['--json', 'run', 'hello']);
    const log = await readFile(join(stateDir, 'orchestrator.log'), 'utf8').catch(() => '');
    expect(ran.exitCode, `${ran.stderr}\n${log}`).toBe(0);
    expect((await readRecord(id)).runs[0]).toMatchObject({ status: 'unknown', reason: 'owner_died' });
    expect((await readRecord(id)).status).toBe('needs_attention');
    await noServer();
    const served = await readFile(join(stateDir, 'orchestrator.log'), 'utf8');
    expect(served).toMatch(/recovered the state directory from a stale owner/);
    for (const bad of ['s-typo000001', 's-cut0000001']) {
      expect(served.match(new RegExp(`session ${bad} is left alone: .*session\\.json is malformed`, 'g')), served).toHaveLength(1);
    }
    expect(await readFile(recordFile('s-typo000001'), 'utf8')).toBe(typoText);
  });
});

describe('an owner that died, and reconcile (items 1 and 8)', { timeout: CLI_TEST_TIMEOUT_MS * 2 }, () => {
  it('without a server, a dead owner’s running run shows as unknown (owner_died), and reconcile settles it on the store', async () => {
    await configure();
    const id = await newSession();
    await noServer();
    // What a SIGKILLed orchestrator leaves: the run still `running`, the owner file naming a dead pid.
    const record = await readRecord(id);
    const crashed = {
      ...record,
      status: 'working',
      runs: [{ ...record.runs[0]!, status: 'running', reason: undefined, endedAt: undefined }],
    };
    await writeFile(recordFile(id), JSON.stringify(crashed));
    // ...and its turn.completed never reached the log (with it, the logged outcome is shown instead).
    const eventsFile = join(stateDir, 'sessions', id, 'events.jsonl');
    const lines = (await readFile(eventsFile, 'utf8')).split('\n').filter((line) => line !== '' && !line.includes('"turn.completed"'));
    await writeFile(eventsFile, `${lines.join('\n')}\n`);
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    await writeFile(join(stateDir, 'owner.json'), JSON.stringify({ pid: gone.pid, host: hostname(), startedAt: new Date().toISOString() }));

    const listed = await box.run(['sessions']);
    expect(listed.stdout).toMatch(new RegExp(`^${id} +(?:droid +)?needs attention .*r1 unknown \\(owner_died\\)`, 'm'));
    expect(listed.stdout).not.toMatch(/working/);
    expect((await readRecord(id)).runs[0]?.status).toBe('running');

    const refused = await box.run(['send', id, 'go on']);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toMatch(/unknown/);
    await noServer();

    const bad = await box.run(['sessions', 'reconcile', id, 'r1', '--status', 'finished']);
    expect(bad.exitCode).toBe(2);
    const settled = await box.run(['sessions', 'reconcile', id, 'r1', '--status', 'completed', '--note', 'checked the diff']);
    expect(settled.exitCode, settled.stderr).toBe(0);
    expect(settled.stdout).toMatch(/run r1 reconciled as completed; the session is idle/);
    expect((await readRecord(id)).runs[0]).toMatchObject({ status: 'completed', reason: 'reconciled' });
    const events = await box.run(['events', id]);
    expect(events.stdout).toMatch(/run r1 reconciled as completed \(was unknown: owner_died\): checked the diff/);
    expect(existsSync(join(stateDir, 'owner.json'))).toBe(false);
    const again = await box.run(['send', id, 'go on']);
    const log = await readFile(join(stateDir, 'orchestrator.log'), 'utf8').catch(() => '');
    expect(again.exitCode, `${again.stderr}\n${log}`).toBe(0);
  });
});

describe('owner identity (item 6)', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a stale owner.json naming a live unrelated pid (a sleep) does not block sessions or run', async () => {
    await configure();
    const unrelated = spawn('sleep', ['300'], { stdio: 'ignore' });
    others.push(unrelated);
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    await writeFile(
      join(stateDir, 'owner.json'),
      JSON.stringify({ pid: unrelated.pid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z' }),
    );
    expect(() => process.kill(unrelated.pid!, 0)).not.toThrow();

    const listed = await box.run(['sessions']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const ran = await box.run(['run', 'hello']);
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/: completed/);
    expect(unrelated.exitCode).toBeNull();
  });
});

describe('a stopped orchestrator (item 7)', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('sessions and other client calls end in bounded time, naming the server and how to stop it', async () => {
    await configure();
    const serve = startOneWorks(['--config', box.configPath, 'serve'], { cwd: box.cwd, env: box.env });
    started.push(serve);
    while (!existsSync(join(stateDir, 'orchestrator.sock'))) await sleep(50);
    const id = await newSession();
    serve.kill('SIGSTOP');

    const listed = await box.run(['sessions']);
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${id} `, 'm'));
    expect(listed.stderr).toContain(`(pid ${serve.pid}, socket ${join(stateDir, 'orchestrator.sock')}) is not responding: it is stopped`);
    expect(listed.stderr).toContain(`kill -CONT ${serve.pid}`);

    const cancel = await box.run(['cancel', id]);
    expect(cancel.exitCode).toBe(6);
    expect(cancel.stderr).toMatch(new RegExp(`pid ${serve.pid}, socket .* is not responding`));
    expect(cancel.stderr).not.toMatch(/request c\d|waitForRun|hello/);

    serve.kill('SIGCONT');
    serve.kill('SIGTERM');
    expect((await serve.result).exitCode).toBe(0);
  });
});
