import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliRig, CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { waitForExit, waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import { lastUserText, type RecordedRequest } from '../support/scripted-model.js';

// `--adapter droid-acp`: the real droid 0.225.2 in its ACP mode (`droid exec --output-format
// acp`), driven by One Works over the official ACP SDK, against the scripted chat-completions
// server on 127.0.0.1 (BYOK customModels from the adapters.droid block, airgap through `env`).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const COMMAND = 'echo acp-hi > proof.txt && cat proof.txt';

// Every text the model was sent, for "the conversation carries" checks.
function transcript(request: RecordedRequest): string {
  return JSON.stringify((request.body as { messages?: unknown } | undefined)?.messages ?? []);
}

// Everything One Works wrote for the session (state files, event log) as one string.
async function writtenState(rig: CliRig): Promise<string> {
  await rig.untilNoServer();
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      // The session HOME is droid's own (it holds the settings droid reads the key from by reference).
      if (entry.isDirectory() && entry.name === 'home') continue;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.push(await readFile(path, 'utf8'));
    }
  };
  await walk(rig.stateDir);
  return out.join('\n');
}

describe('droid-acp: droid in ACP mode, end to end', () => {
  it('a command runs in the workspace at autonomy high: one span, its result, the answer; no key leaks, ~/.factory untouched', async () => {
    const model = await rigs.model({
      steps: [
        {
          text: 'Writing the file.',
          toolCalls: [
            { id: 'call_acp_run_1', name: 'Execute', arguments: { command: COMMAND, riskLevel: 'low', riskLevelReason: 'one file' } },
          ],
        },
        { text: 'The file is written.' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' }, droidAcp: {} });

    const result = await rig.run(['run', '--adapter', 'droid-acp', '--workspace', rig.workspace, 'write a file']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(await readFile(join(rig.workspace, 'proof.txt'), 'utf8')).toBe('acp-hi\n');

    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe('droid-acp');
    expect(record.nativeSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'Writing the file.The file is written.' });
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'session.started')).toMatchObject({
      adapter: 'droid-acp',
      resumed: false,
      versionFacts: { api: 'acp', protocolVersion: '1.0.0' },
    });
    const calls = events.filter((e) => e.type === 'tool.call');
    expect(calls.map((e) => e.phase)).toEqual(['input', 'running']);
    expect(calls[0]).toMatchObject({ toolUseId: 'call_acp_run_1', kind: 'execute', label: `execute: ${COMMAND}` });
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results).toEqual([expect.objectContaining({ toolUseId: 'call_acp_run_1', isError: false, closedBy: 'agent' })]);
    // droid asked (its native mode leaves every command to One Works); the policy chose droid's own allow-once option.
    expect(events.find((e) => e.type === 'permission.requested')).toMatchObject({
      tools: [expect.objectContaining({ toolUseId: 'call_acp_run_1', kind: 'execute' })],
      options: ['allow-once', 'allow-session', 'deny'],
    });
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({
      decision: 'allow',
      option: 'allow-once',
      nativeOption: 'proceed_once',
      by: 'policy',
    });
    expect(events.filter((e) => e.type === 'assistant.message').map((e) => e.text)).toEqual(['Writing the file.The file is written.']);

    // The model got the command's output back under the same id.
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    expect(transcript(steps[1]!)).toContain('acp-hi');
    expect(transcript(steps[1]!)).toContain('call_acp_run_1');
    expect(result.stdout).toContain('The file is written.');

    // The BYOK key reached the model (droid sent it) but nothing One Works wrote or printed.
    expect(steps[0]!.headers.authorization).toBe(`Bearer ${RIG_API_KEY}`);
    expect(result.stdout + result.stderr).not.toContain(RIG_API_KEY);
    expect(await writtenState(rig)).not.toContain(RIG_API_KEY);
    // droid kept its state in the session HOME; the user's ~/.factory was never created.
    expect(existsSync(join(rig.userHome, '.factory'))).toBe(false);
    expect(existsSync(join(rig.sessionHome(id!), '.factory', 'settings.json'))).toBe(true);
    await rig.closedEvents(id!);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('a command the policy escalates with nobody to ask is declined: droid gets its reject option and nothing runs', async () => {
    const model = await rigs.model({
      steps: [
        {
          toolCalls: [
            { id: 'call_acp_deny_1', name: 'Execute', arguments: { command: 'touch denied.txt', riskLevel: 'low', riskLevelReason: 'x' } },
          ],
        },
        { text: 'I could not run it.' },
      ],
    });
    // Autonomy low: the policy escalates the command to a person; the CLI has no terminal, so it is declined.
    const rig = await rigs.create({ baseUrl: model.baseUrl, droidAcp: {} });
    const result = await rig.run(['run', '--adapter', 'droid-acp', '--workspace', rig.workspace, 'touch a file']);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(
      events.find((e) => e.type === 'permission.decided'),
      result.stderr,
    ).toMatchObject({ decision: 'deny', option: 'deny', nativeOption: 'cancel' });
    expect(existsSync(join(rig.workspace, 'denied.txt'))).toBe(false);
    // droid marks the call failed and ends the turn without asking the model again.
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([
      expect.objectContaining({ toolUseId: 'call_acp_deny_1', isError: true, closedBy: 'agent' }),
    ]);
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
    await rig.closedEvents(id!);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('send: a second turn in a new droid process loads the session (session/load); the model sees the first turn', async () => {
    const model = await rigs.model({ steps: [{ text: 'First answer: ALPHA-1.' }, { text: 'Second answer.' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droidAcp: {} });
    const first = await rig.run(['run', '--adapter', 'droid-acp', '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const second = await rig.run(['send', id!, 'what did I say?']);
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toContain('Second answer.');
    const record = await rig.readSession(id!);
    expect(record.runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    expect(lastUserText(steps[1]!)).toContain('what did I say?');
    expect(transcript(steps[1]!)).toContain('remember BRAVO-2');
    expect(transcript(steps[1]!)).toContain('First answer: ALPHA-1.');
    const events = await rig.closedEvents(id!, 2);
    expect(events.filter((e) => e.type === 'session.started').map((e) => e.resumed)).toEqual([false, true]);
    // The load replays the recorded conversation as updates: not written again.
    expect(events.filter((e) => e.type === 'assistant.message').map((e) => e.text)).toEqual(['First answer: ALPHA-1.', 'Second answer.']);
  });

  it('a session droid cannot load fails with session_load_failed and starts no new conversation', async () => {
    const model = await rigs.model({ steps: [{ text: 'first' }, { text: 'must never be asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droidAcp: {} });
    const first = await rig.run(['run', '--adapter', 'droid-acp', '--workspace', rig.workspace, 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const record = await rig.readSession(id!);
    // Remove droid's own record of the session from the session HOME.
    const sessions = join(rig.sessionHome(id!), '.factory', 'sessions');
    const removed: string[] = [];
    for (const dir of await readdir(sessions)) {
      for (const file of await readdir(join(sessions, dir))) {
        if (file.startsWith(record.nativeSessionId!)) {
          await rm(join(sessions, dir, file));
          removed.push(file);
        }
      }
    }
    expect(removed.length).toBeGreaterThan(0);
    const second = await rig.run(['--json', 'send', id!, 'continue']);
    expect(second.exitCode).not.toBe(0);
    expect(second.stdout + second.stderr).toContain('session_load_failed');
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);
    const after = await rig.readSession(id!);
    expect(after.nativeSessionId).toBe(record.nativeSessionId);
  });

  it('SIGINT during a running command: session/cancel ends the turn as interrupted, the command is terminated, no process left', async () => {
    const command = "perl -e 'sleep 3032'";
    const model = await rigs.model({
      steps: [
        { toolCalls: [{ id: 'call_acp_int_1', name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'wait' } }] },
        { text: 'never reached' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' }, droidAcp: {} });
    const cli = rig.start(['run', '--adapter', 'droid-acp', '--workspace', rig.workspace, 'wait a while']);
    const during = await waitForProcess(
      () => rig.processes(),
      (p) => p.args.includes('sleep 3032') && !p.args.includes('--output-format'),
    );
    expect(
      during.some((p) => p.args.includes('--output-format acp')),
      'droid runs the tool',
    ).toBe(true);
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'interrupted' });
    const results = (await rig.readEvents(id!)).filter((e) => e.type === 'tool.result');
    expect(results).toEqual([expect.objectContaining({ toolUseId: 'call_acp_int_1', isError: true })]);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
    expect(
      await waitForExit(
        during.map((p) => p.pid),
        10_000,
      ),
    ).toEqual([]);
    // droid 0.225.2 answers session/cancel by terminating the command (SIGTERM) and telling the
    // model so once more before it ends the turn; it never asks the model anything else.
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps.length).toBeLessThanOrEqual(2);
    if (steps[1]) expect(transcript(steps[1])).toContain('Command terminated by signal');
  });
});
