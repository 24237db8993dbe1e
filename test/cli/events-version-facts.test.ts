import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFakeDroidBinary } from '../peers/fake-droid-binary.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, processesReferring, type CliSandbox } from '../support/cli-runner.js';
import { killQuietly } from '../support/rig-processes.js';

// `session.started` carries the adapter's version facts record; an events file written by the
// previous version (droid's `apiVersion`/`protocolVersion` pair on the event) is still read and shown.

let box: CliSandbox;
let stateDir: string;

beforeEach(async () => {
  box = await createCliSandbox();
  stateDir = join(box.root, 'state');
  const dir = join(box.root, 'fake');
  await mkdir(dir);
  const binary = await writeFakeDroidBinary(dir);
  await box.writeConfig(
    [
      `state:\n  directory: ${stateDir}`,
      `cache:\n  directory: ${join(box.root, 'cache')}`,
      `workspaces:\n  approved: [${box.cwd}]`,
      'orchestrator:\n  idleExitMs: 300\n  keepWarmMs: 0',
      'adapters:',
      '  droid:',
      `    cli:\n      source: path\n      path: ${binary}\n      version: 0.225.2`,
      '    credentials:\n      FACTORY_TOKEN: ft-token-vf10',
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  for (const left of processesReferring(box.root)) killQuietly(left.pid);
  await box.remove();
});

describe('version facts on session.started', { timeout: CLI_TEST_TIMEOUT_MS * 2 }, () => {
  it('a new session records the facts as a record; an old events file with the droid pair is still read and shown', async () => {
    const first = await box.run(['--json', 'run', 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const id = (JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    // `run` exits when its turn settles; the orchestrator then closes the agent and exits (idle),
    // appending to the log: wait for it, so the log read and rewritten below is complete.
    await expect.poll(() => processesReferring(box.root), { timeout: 15_000 }).toEqual([]);
    const eventsFile = join(stateDir, 'sessions', id, 'events.jsonl');
    const lines = (await readFile(eventsFile, 'utf8')).split('\n').filter((line) => line !== '');
    const startedAt = lines.findIndex((line) => line.includes('"session.started"'));
    const started = JSON.parse(lines[startedAt]!) as Record<string, unknown>;
    // What this version writes: the record, and no droid-named members.
    expect(started.versionFacts).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.220.0' });
    expect(started).not.toHaveProperty('apiVersion');
    expect(started).not.toHaveProperty('protocolVersion');

    const shown = await box.run(['events', id]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/session started \(droid 0\.225\.2; apiVersion 1\.0\.0, protocolVersion 1\.220\.0\)/);

    // The previous version's line: the droid pair as members of the event.
    const { versionFacts: _facts, ...rest } = started;
    lines[startedAt] = JSON.stringify({ ...rest, apiVersion: '1.0.0', protocolVersion: '1.219.0' });
    await writeFile(eventsFile, `${lines.join('\n')}\n`);

    const old = await box.run(['events', id]);
    expect(old.exitCode, old.stderr).toBe(0);
    expect(old.stdout).toMatch(/session started \(droid 0\.225\.2; apiVersion 1\.0\.0, protocolVersion 1\.219\.0\)/);
    const json = await box.run(['--json', 'events', id]);
    expect(json.exitCode, json.stderr).toBe(0);
    const records = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.length).toBe(lines.length);
    expect(records.find((e) => e.type === 'session.started')).toMatchObject({
      adapter: 'droid',
      versionFacts: { apiVersion: '1.0.0', protocolVersion: '1.219.0' },
    });
    // The session's other commands read the old log too.
    const show = await box.run(['sessions', 'show', id]);
    expect(show.exitCode, show.stderr).toBe(0);
  });
});
