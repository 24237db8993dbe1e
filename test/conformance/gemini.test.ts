import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliRig, CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { waitForExit, waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import {
  type GeminiStep,
  geminiFunctionResponses,
  geminiTranscript,
  type ScriptedGemini,
  startScriptedGemini,
} from '../support/scripted-gemini.js';

// `--adapter gemini`: the real Gemini CLI 0.61.0 (`gemini --acp`, the managed bundle run with
// this Node) driven over ACP, against a scripted Gemini streamGenerateContent server on 127.0.0.1.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function gemini(steps: GeminiStep[]): Promise<ScriptedGemini> {
  const model = await startScriptedGemini({ steps });
  rigs.defer(() => model.close());
  return model;
}

const COMMAND = 'echo gem-hi > proof.txt && cat proof.txt';

async function writtenState(rig: CliRig): Promise<string> {
  await rig.untilNoServer();
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name === 'home') continue;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.push(await readFile(path, 'utf8'));
    }
  };
  await walk(rig.stateDir);
  return out.join('\n');
}

describe('gemini: Gemini CLI over ACP, end to end', () => {
  it('run_shell_command runs in the workspace at autonomy high; the model gets its output; no key leaks, ~/.gemini untouched', async () => {
    const model = await gemini([
      {
        text: 'Writing the file.',
        functionCalls: [{ name: 'run_shell_command', args: { command: COMMAND, description: 'write proof' } }],
        usage: { promptTokenCount: 40, candidatesTokenCount: 7 },
      },
      (request) => ({
        text: `The tool said: ${geminiFunctionResponses(request).length > 0 ? 'ok' : 'nothing'}`,
        usage: { promptTokenCount: 55, candidatesTokenCount: 9 },
      }),
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl, autonomy: 'high' } });
    const result = await rig.run(['run', '--adapter', 'gemini', '--workspace', rig.workspace, 'write a file']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(await readFile(join(rig.workspace, 'proof.txt'), 'utf8')).toBe('gem-hi\n');

    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe('gemini');
    expect(record.runs[0]).toMatchObject({ status: 'completed' });
    expect(record.runs[0]?.text).toContain('The tool said: ok');
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'session.started')).toMatchObject({
      adapter: 'gemini',
      resumed: false,
      versionFacts: { api: 'acp' },
    });
    // Gemini's first notice of the call is the permission request: the span opens there.
    const calls = events.filter((e) => e.type === 'tool.call');
    expect(calls[0]).toMatchObject({ phase: 'input', kind: 'execute', label: `execute: ${COMMAND}` });
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results).toEqual([expect.objectContaining({ toolUseId: calls[0]!.toolUseId, isError: false, closedBy: 'agent' })]);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({
      decision: 'allow',
      option: 'allow-once',
      nativeOption: 'proceed_once',
      by: 'policy',
    });

    // Usage: Gemini's `_meta.quota` of the prompt result, the sums over the turn's two model requests.
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      expect.objectContaining({ scope: 'turn', usage: { reported: true, inputTokens: 95, outputTokens: 16 } }),
    ]);
    expect(record.runs[0]?.usage).toEqual({ reported: true, inputTokens: 95, outputTokens: 16 });

    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    expect(geminiFunctionResponses(steps[1]!)[0]?.output).toContain('gem-hi');
    expect(steps[0]!.path).toContain('/v1beta/models/scripted:streamGenerateContent');
    expect(steps[0]!.headers['x-goog-api-key']).toBe(RIG_API_KEY);
    expect(result.stdout + result.stderr).not.toContain(RIG_API_KEY);
    expect(await writtenState(rig)).not.toContain(RIG_API_KEY);
    expect(existsSync(join(rig.userHome, '.gemini'))).toBe(false);
    await rig.closedEvents(id!);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('a command the policy escalates with nobody to ask is declined: Gemini gets its cancel option and nothing runs', async () => {
    const model = await gemini([
      { functionCalls: [{ name: 'run_shell_command', args: { command: 'touch denied.txt', description: 'touch' } }] },
      { text: 'I could not run it.' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl } });
    const result = await rig.run(['run', '--adapter', 'gemini', '--workspace', rig.workspace, 'touch a file']);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(
      events.find((e) => e.type === 'permission.decided'),
      result.stderr,
    ).toMatchObject({ decision: 'deny', option: 'deny', nativeOption: 'cancel' });
    expect(existsSync(join(rig.workspace, 'denied.txt'))).toBe(false);
    // Gemini tells the model the call was cancelled; the model's answer ends the turn.
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    expect(geminiTranscript(steps[1]!)).toContain('canceled');
  });

  it('send: a second turn in a new process through session/load; the model request carries turn 1, at once and again later', async () => {
    const model = await gemini([{ text: 'First answer: ALPHA-1.' }, { text: 'Second answer: CHARLIE-3.' }, { text: 'Third answer.' }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl } });
    const first = await rig.run(['run', '--adapter', 'gemini', '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    // Right after the first turn (Gemini 0.61.0 alone would wipe a record of the same minute on load).
    const second = await rig.run(['send', id!, 'what did I say?']);
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    await rig.closedEvents(id!);
    const third = await rig.run(['send', id!, 'and after that?']);
    expect(third.exitCode, third.stderr + third.stdout).toBe(0);

    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(3);
    const turn2 = geminiTranscript(steps[1]!);
    expect(turn2).toContain('remember BRAVO-2');
    expect(turn2).toContain('First answer: ALPHA-1.');
    expect(turn2).toContain('what did I say?');
    const turn3 = geminiTranscript(steps[2]!);
    for (const said of ['remember BRAVO-2', 'First answer: ALPHA-1.', 'what did I say?', 'Second answer: CHARLIE-3.', 'and after that?'])
      expect(turn3).toContain(said);
    // The user's words reach the model once each: the load restored the conversation, it did not replay it.
    expect(turn3.split('remember BRAVO-2')).toHaveLength(2);

    const record = await rig.readSession(id!);
    expect(record.runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(record.runs[1]?.text).toContain('Second answer: CHARLIE-3.');
    const started = (await rig.readEvents(id!)).filter((e) => e.type === 'session.started');
    expect(started.map((e) => (e as { resumed?: boolean }).resumed)).toEqual([false, true, true]);
    // The replayed history was not written to the event log again: one assistant message per turn.
    expect((await rig.readEvents(id!)).filter((e) => e.type === 'assistant.message')).toHaveLength(3);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('SIGINT during a running command: session/cancel ends the turn as interrupted, nothing survives', async () => {
    const command = "perl -e 'sleep 3033'";
    const model = await gemini([
      { functionCalls: [{ name: 'run_shell_command', args: { command, description: 'wait' } }] },
      { text: 'never reached' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl, autonomy: 'high' } });
    const cli = rig.start(['run', '--adapter', 'gemini', '--workspace', rig.workspace, 'wait a while']);
    const during = await waitForProcess(
      () => rig.processes(),
      (p) => p.args.includes('sleep 3033') && !p.args.includes('--acp'),
      90000,
    );
    expect(
      during.some((p) => p.args.includes('--acp')),
      'gemini runs the tool',
    ).toBe(true);
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'interrupted' });
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
    expect(
      await waitForExit(
        during.map((p) => p.pid),
        10_000,
      ),
    ).toEqual([]);
  });
});
