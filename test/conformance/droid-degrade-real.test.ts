import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse, stringify } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, ONE_WORKS_BIN, type CliRig, waitWhileRunning } from '../support/one-works-cli.js';
import { isAlive, waitForExit } from '../support/rig-processes.js';
import { lastUserText, type ScriptedModel, type Step } from '../support/scripted-model.js';

// Issue 14's degradation promises, from the user's side, on the real droid (0.225.2; the kills
// also on 0.215.0): a start that fails outright runs the turn in one-shot mode (also when droid's
// catalog cannot be listed for the model check), `fallback: none` fails it instead, and droid
// killed from outside mid-turn is restarted and the turn retried once only when nothing of it was
// observed. droid is run through a wrapper (`cli.source: path`) that refuses stream-jsonrpc while
// a flag file exists, notes the pid of each stream-jsonrpc droid, logs every invocation's
// arguments and execs the real droid.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

type Version = '0.225.2' | '0.215.0';
const binaries: Partial<Record<Version, string>> = {};
beforeAll(() => {
  for (const [version, name] of [
    ['0.225.2', 'ONE_WORKS_TEST_DROID'],
    ['0.215.0', 'ONE_WORKS_TEST_DROID_0215'],
  ] as const) {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: run this file in the vitest conformance project (its global setup installs droid)`);
    binaries[version] = value;
  }
});

interface WrappedRig {
  rig: CliRig;
  /** While this file exists, droid's stream-jsonrpc mode exits at once (its start fails outright). */
  flag: string;
  /**
   * Pids of the stream-jsonrpc droids started in the rig's workspace (the session's, not the
   * catalog listing's, which runs in a throwaway directory and may start before or after it), in order.
   */
  pids(): Promise<number[]>;
  /** The argument lists droid was invoked with, in order. */
  invocations(): Promise<string[]>;
  /** The `catalog/` entries of this rig's own cache directory. */
  catalogDir: string;
}

// A rig running droid through the wrapper, with a cache directory of its own (the shared test
// cache may hold a catalog listed by another test: here it must hold exactly what this test listed).
async function wrappedRig(model: ScriptedModel, droid: Record<string, unknown> = {}, version: Version = '0.225.2'): Promise<WrappedRig> {
  const dir = await rigs.tempDir('ow-degrade-bin-');
  const flag = join(dir, 'stream-jsonrpc-off');
  const pidFile = join(dir, 'pids');
  const argsFile = join(dir, 'invocations');
  const wrapper = join(dir, 'droid');
  const script = [
    '#!/bin/sh',
    `printf '%s\\n' "$*" >> '${argsFile}'`,
    'case " $* " in *" stream-jsonrpc "*)',
    `  if [ -e '${flag}' ]; then echo 'wrapper: stream-jsonrpc is off' >&2; exit 1; fi`,
    `  echo "$$ $PWD" >> '${pidFile}' ;;`,
    'esac',
    `exec '${binaries[version]}' "$@"`,
    '',
  ].join('\n');
  await writeFile(wrapper, script);
  await chmod(wrapper, 0o755);
  const rig = await rigs.create({ baseUrl: model.baseUrl, cli: { source: 'path', path: wrapper, version }, droid });
  const cacheDir = join(rig.root, 'cache');
  const config = parse(await readFile(rig.configPath, 'utf8')) as Record<string, unknown>;
  await writeFile(rig.configPath, stringify({ ...config, cache: { directory: cacheDir } }));
  const lines = async (file: string): Promise<string[]> => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return {
    rig,
    flag,
    pids: async () =>
      (await lines(pidFile)).flatMap((line) => {
        const [pid, cwd] = line.split(' ', 2);
        return cwd === rig.workspace ? [Number(pid)] : [];
      }),
    invocations: () => lines(argsFile),
    catalogDir: join(cacheDir, 'catalog'),
  };
}

// One-shot droid: `droid exec` without stream-jsonrpc (the only such invocation One Works makes).
const isOneShot = (args: string): boolean => args.startsWith('exec ') && !args.includes('stream-jsonrpc');

const warnings = (events: RuntimeEvent[]): string[] => events.flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : []));
const steps = (model: ScriptedModel) => model.requests.filter((r) => r.kind === 'step');

describe('droid that cannot start at all (real droid 0.225.2)', () => {
  it('runs the turn in one-shot mode even when its catalog was never listed: the model goes unchecked, with a warning', async () => {
    const model = await scripted([{ text: 'One-shot answer.' }]);
    const w = await wrappedRig(model);
    await writeFile(w.flag, '');

    const result = await w.rig.run(['run', '--workspace', w.rig.workspace, 'say something']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('One-shot answer.');
    const [id] = await w.rig.sessionIds();
    const record = await w.rig.readSession(id!);
    expect(record.runs.map((run) => [run.status, run.mode])).toEqual([['completed', 'oneshot']]);
    const warns = warnings(await w.rig.readEvents(id!));
    expect(warns).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^note: droid cannot start to list its models \(.*\) and its turns run in one-shot mode .*no catalog of droid was ever listed here, so the model could not be checked/,
        ),
        expect.stringMatching(/^droid's start failed .*one-shot mode/),
      ]),
    );
    // The live view said so on stderr, and `sessions show` names the mode.
    expect(result.stderr).toMatch(/model could not be checked/);
    const shown = await w.rig.run(['sessions', 'show', id!]);
    expect(shown.stdout).toContain('mode=oneshot');
    expect(await sessionStatus(w.rig, id!)).toMatchObject({ latestRun: { runId: 'r1', status: 'completed', mode: 'oneshot' } });
    expect((await w.invocations()).filter(isOneShot)).toHaveLength(1);
    expect(lastUserText(steps(model)[0]!)).toBe('say something');
  });

  it('checks the model against the last known catalog, however old: an unlisted model is refused, a listed one runs one-shot', async () => {
    const model = await scripted([{ text: 'Checked and answered.' }]);
    const w = await wrappedRig(model);
    const listed = await w.rig.run(['models']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    // The entry is an hour old: expired, so droid is asked first (and cannot start).
    const [entryName] = (await readdir(w.catalogDir)).filter((f) => f.startsWith('droid-'));
    const entryPath = join(w.catalogDir, entryName!);
    const entry = JSON.parse(await readFile(entryPath, 'utf8')) as { fetchedAt: number };
    const listedAt = Date.now() - 3_600_000;
    await writeFile(entryPath, JSON.stringify({ ...entry, fetchedAt: listedAt }));
    await writeFile(w.flag, '');

    const refused = await w.rig.run(['run', '--workspace', w.rig.workspace, '--model', 'custom:Nowhere-9', 'hello']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toMatch(/custom:Nowhere-9.*`one-works models` shows all/);
    expect(await w.rig.sessionIds()).toEqual([]);
    expect((await w.invocations()).filter(isOneShot)).toEqual([]);

    const result = await w.rig.run(['run', '--workspace', w.rig.workspace, 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [id] = await w.rig.sessionIds();
    expect((await w.rig.readSession(id!)).runs.map((run) => [run.status, run.mode])).toEqual([['completed', 'oneshot']]);
    expect(warnings(await w.rig.readEvents(id!))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^note: droid cannot start .*the model was checked against droid's last known catalog, listed ${new Date(listedAt).toISOString()}$`,
          ),
        ),
      ]),
    );
    expect(steps(model)).toHaveLength(1);
  });

  it('with fallback none the turn ends failed with the start error and no one-shot droid runs', async () => {
    const model = await scripted([{ text: 'never sent' }]);
    const w = await wrappedRig(model, { fallback: 'none' });
    // A fresh catalog, so the turn is accepted and meets the failing start itself.
    const listed = await w.rig.run(['models']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    await writeFile(w.flag, '');

    const result = await w.rig.run(['run', '--workspace', w.rig.workspace, 'hello']);
    expect(result.exitCode).not.toBe(0);
    const [id] = await w.rig.sessionIds();
    const record = await w.rig.readSession(id!);
    expect(record.runs).toHaveLength(1);
    expect(record.runs[0]).toMatchObject({ status: 'failed', mode: 'stream-jsonrpc' });
    expect(record.runs[0]?.reason).toMatch(/^(process_exited|connection_closed)$/);
    expect(warnings(await w.rig.readEvents(id!))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^droid's start failed .*adapters\.droid\.fallback is none, so the turn fails$/)]),
    );
    expect((await w.invocations()).filter(isOneShot)).toEqual([]);
    expect(steps(model)).toEqual([]);

    // Without a fresh catalog the same failure refuses the turn at the model check: nothing runs either.
    await rm(w.catalogDir, { recursive: true, force: true });
    const again = await w.rig.run(['run', '--workspace', w.rig.workspace, 'hello again']);
    expect(again.exitCode).not.toBe(0);
    expect(again.stderr).toMatch(/probe_failed|listing models and tools of droid/);
    expect(await w.rig.sessionIds()).toEqual([id]);
    expect((await w.invocations()).filter(isOneShot)).toEqual([]);
    expect(steps(model)).toEqual([]);
  });
});

for (const version of ['0.225.2', '0.215.0'] as const)
  describe(`droid killed from outside during a turn (real droid ${version})`, () => {
    it('before anything of the turn was observed: restarted, session loaded, the turn sent once more with a warning', async () => {
      const model = await scripted([{ hangMs: 120_000 }, { text: 'Answered after the restart.' }]);
      const w = await wrappedRig(model, {}, version);
      const started = w.rig.start(['run', '--workspace', w.rig.workspace, 'count the stars']);
      // The model holds the turn's first request: droid sent it, nothing came back yet.
      // A `run` that failed (e.g. its orchestrator did not start) ends the wait with its exit code, stderr and the orchestrator's log.
      await waitWhileRunning(w.rig, started, 'the first model request', async () => (steps(model).length > 0 ? true : undefined));
      const [victim] = (await w.pids()).slice(-1);
      expect(isAlive(victim!)).toBe(true);
      process.kill(victim!, 'SIGKILL');

      const result = await started.result;
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('Answered after the restart.');
      expect(await waitForExit([victim!], 15_000)).toEqual([]);
      // The model saw the prompt twice: the killed attempt and the retry.
      expect(steps(model).map((request) => lastUserText(request))).toEqual(['count the stars', 'count the stars']);
      const [id] = await w.rig.sessionIds();
      const record = await w.rig.readSession(id!);
      expect(record.runs.map((run) => [run.status, run.mode, run.text])).toEqual([
        ['completed', 'stream-jsonrpc', 'Answered after the restart.'],
      ]);
      const events = await w.rig.readEvents(id!);
      expect(warnings(events)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^droid went away before anything of the turn was observed .*sending the turn once more$/),
        ]),
      );
      // A new droid served the retry (loading the same native session); no one-shot droid ran.
      const pids = await w.pids();
      expect(pids.indexOf(victim!)).toBe(pids.length - 2);
      expect((await w.invocations()).filter(isOneShot)).toEqual([]);
    });

    it('after assistant text was streamed: the turn fails and is never replayed', async () => {
      const model = await scripted([{ hangMs: 120_000, text: 'Half an answer, then' }, { text: 'must never be asked for' }]);
      const w = await wrappedRig(model, {}, version);
      const started = w.rig.start(['run', '--workspace', w.rig.workspace, 'tell me a story']);
      await waitWhileRunning(w.rig, started, 'the first model request', async () => (steps(model).length > 0 ? true : undefined));
      // One Works observed the streamed text (the live view printed it) before droid is killed.
      await waitWhileRunning(w.rig, started, 'streamed assistant text', async () =>
        started.stdoutSoFar().includes('Half an answer') ? true : undefined,
      );
      const [victim] = (await w.pids()).slice(-1);
      process.kill(victim!, 'SIGKILL');

      const result = await started.result;
      expect(result.exitCode).not.toBe(0);
      expect(steps(model)).toHaveLength(1);
      const [id] = await w.rig.sessionIds();
      const record = await w.rig.readSession(id!);
      expect(record.runs).toHaveLength(1);
      expect(['failed', 'unknown']).toContain(record.runs[0]?.status);
      const warns = warnings(await w.rig.readEvents(id!));
      expect(warns.filter((message) => /once more|one-shot/.test(message))).toEqual([]);
      // No droid was started again for the turn, and no one-shot droid ran.
      const pids = await w.pids();
      expect(pids.slice(pids.indexOf(victim!))).toEqual([victim]);
      expect((await w.invocations()).filter(isOneShot)).toEqual([]);
    });
  });

async function scripted(script: Step[]): Promise<ScriptedModel> {
  return rigs.model({ strict: true, steps: script });
}

// MCP `session_status` of a session, through `one-works mcp` on stdio.
async function sessionStatus(rig: CliRig, id: string): Promise<unknown> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
    env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
    cwd: rig.root,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'conformance', version: '0' });
  await client.connect(transport);
  try {
    return (await client.callTool({ name: 'session_status', arguments: { session: id } })).structuredContent;
  } finally {
    await client.close();
  }
}
