import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import {
  type ResponsesStep,
  responsesToolOutputs,
  responsesTranscript,
  type ScriptedResponses,
  startScriptedResponses,
} from '../support/scripted-responses.js';

// `one-works run` / `send` with `--adapter codex`: the real Codex 0.171.0 (`codex app-server`)
// against a scripted OpenAI Responses server on 127.0.0.1 (BYOK endpoint in adapters.codex).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function responses(steps: ResponsesStep[]): Promise<ScriptedResponses> {
  const model = await startScriptedResponses({ steps });
  rigs.defer(() => model.close());
  return model;
}

const COMMAND = 'echo hi > proof.txt && cat proof.txt';

describe('codex: run and send', () => {
  it('a text turn: the answer, a completed run, usage, and the model warning as an event, not a failure', async () => {
    const model = await responses([{ text: 'Hello from the scripted model.', usage: { input_tokens: 40, output_tokens: 7 } }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });
    const result = await rig.run(['run', '--adapter', 'codex', '--workspace', rig.workspace, 'say hello']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toContain('Hello from the scripted model.');
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe('codex');
    expect(record.nativeSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'Hello from the scripted model.' });
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'session.started')).toMatchObject({
      adapter: 'codex',
      resumed: false,
      cliVersion: '0.171.0',
      versionFacts: { codexVersion: '0.171.0' },
    });
    expect(events.filter((e) => e.type === 'assistant.message').map((e) => e.text)).toEqual(['Hello from the scripted model.']);
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ usage: { reported: true, inputTokens: 40, outputTokens: 7 } });
    const warning = events.find((e) => e.type === 'log' && e.message.includes('Model metadata'));
    expect(warning).toMatchObject({ level: 'warn' });
    // The request reached the scripted server with the injected key as the bearer token and the prompt in its input.
    const [request] = model.requests.filter((r) => r.kind === 'step');
    expect(request!.headers.authorization).toBe('Bearer sk-rig-secret-7f3a9c21');
    expect(responsesTranscript(request!)).toContain('say hello');
  });

  it('runs a command in the workspace at autonomy high, records its span and result, and the model sees the output', async () => {
    const model = await responses([
      { text: 'Writing the file.', toolCalls: [{ name: 'exec_command', arguments: { cmd: COMMAND }, callId: 'call_run_1' }] },
      (request) => ({ text: `The tool said: ${responsesToolOutputs(request)[0]?.output.includes('hi') ? 'hi' : '(nothing)'}` }),
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl, autonomy: 'high' } });
    const result = await rig.run(['run', '--adapter', 'codex', '--workspace', rig.workspace, 'write a file']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(await readFile(join(rig.workspace, 'proof.txt'), 'utf8')).toBe('hi\n');

    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'The tool said: hi' });
    const events = await rig.readEvents(id!);
    const call = events.find((e) => e.type === 'tool.call');
    expect(call).toMatchObject({ toolUseId: 'call_run_1', name: 'commandExecution', kind: 'execute', label: `execute: ${COMMAND}` });
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolUseId: 'call_run_1', isError: false, closedBy: 'agent' });
    expect((results[0] as { output: string }).output).toContain('hi');
    const requested = events.find((e) => e.type === 'permission.requested');
    expect(requested).toMatchObject({ options: ['allow-once', 'allow-session', 'deny'] });
    const decided = events.find((e) => e.type === 'permission.decided');
    expect(decided).toMatchObject({ decision: 'allow', option: 'allow-once', nativeOption: 'accept', by: 'policy' });

    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    const outputs = responsesToolOutputs(steps[1]!);
    expect(outputs.map((o) => o.callId)).toEqual(['call_run_1']);
    expect(outputs[0]!.output).toContain('Process exited with code 0');
    expect(result.stdout).toContain('The tool said: hi');
  });

  it('send: a second turn in a new process resumes the thread; the model request carries the first turn', async () => {
    const model = await responses([{ text: 'First answer: ALPHA-1.' }, { text: 'Second answer.' }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });
    const first = await rig.run(['run', '--adapter', 'codex', '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const second = await rig.run(['send', id!, 'what did I say?']);
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    const record = await rig.readSession(id!);
    expect(record.runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    const transcript = responsesTranscript(steps[1]!);
    expect(transcript).toContain('remember BRAVO-2');
    expect(transcript).toContain('First answer: ALPHA-1.');
    expect(transcript).toContain('what did I say?');
    // Codex's own thread id travels with every model request.
    expect(steps[1]!.headers['thread-id']).toBe(record.nativeSessionId);
    // Two processes: two session.started, the second resumed; history is not re-emitted.
    const events = await rig.closedEvents(id!, 2);
    expect(events.filter((e) => e.type === 'session.started').map((e) => e.resumed)).toEqual([false, true]);
    expect(events.filter((e) => e.type === 'assistant.message').map((e) => e.text)).toEqual(['First answer: ALPHA-1.', 'Second answer.']);
  });
});
