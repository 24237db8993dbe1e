import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_TEST_VERSION, CliRigs } from '../support/one-works-cli.js';
import {
  type AnthropicStep,
  anthropicToolResults,
  anthropicTranscript,
  type ScriptedAnthropic,
  startScriptedAnthropic,
} from '../support/scripted-anthropic.js';

// `one-works run` / `send` with `--adapter claude-code`: the real Claude Code 2.1.333 against a
// scripted Anthropic Messages server on 127.0.0.1 (BYOK endpoint in adapters.claude-code).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function anthropic(steps: AnthropicStep[]): Promise<ScriptedAnthropic> {
  const model = await startScriptedAnthropic({ steps });
  rigs.defer(() => model.close());
  return model;
}

const COMMAND = 'echo hi > proof.txt && cat proof.txt';

describe('claude-code: run and send', () => {
  it('runs a Bash tool call in the workspace, records its span and result, and the model sees the output', async () => {
    const model = await anthropic([
      {
        text: 'Writing the file.',
        toolCalls: [{ id: 'toolu_run_1', name: 'Bash', input: { command: COMMAND, description: 'write proof' } }],
      },
      (request) => ({ text: `The tool said: ${anthropicToolResults(request)[0]?.content ?? '(nothing)'}` }),
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });

    const result = await rig.run([
      'run',
      '--adapter',
      'claude-code',
      '--allow',
      'echo',
      '--allow',
      'cat',
      '--workspace',
      rig.workspace,
      'write a file',
    ]);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(await readFile(join(rig.workspace, 'proof.txt'), 'utf8')).toBe('hi\n');

    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe('claude-code');
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'The tool said: hi' });
    const events = await rig.readEvents(id!);
    const call = events.find((e) => e.type === 'tool.call');
    expect(call).toMatchObject({ toolUseId: 'toolu_run_1', name: 'Bash', kind: 'execute', label: `execute: ${COMMAND}` });
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolUseId: 'toolu_run_1', isError: false, closedBy: 'agent' });
    const decided = events.find((e) => e.type === 'permission.decided');
    expect(decided).toMatchObject({ decision: 'allow', by: 'policy' });
    const usage = events.filter((e) => e.type === 'usage');
    expect(usage.at(-1)).toMatchObject({ usage: { reported: true } });

    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    expect(anthropicToolResults(steps[1]!)).toEqual([{ toolUseId: 'toolu_run_1', content: 'hi', isError: false }]);
    // The native id One Works pre-assigned is the one the CLI used with the model.
    expect(steps[0]!.headers['x-claude-code-session-id']).toBe(record.nativeSessionId);
    expect(result.stdout).toContain('The tool said: hi');
  });

  it('send: a second turn in a new process resumes the native session; the model request carries the first turn', async () => {
    const model = await anthropic([{ text: 'First answer: ALPHA-1.' }, { text: 'Second answer.' }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });
    const first = await rig.run(['run', '--adapter', 'claude-code', '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const second = await rig.run(['send', id!, 'what did I say?']);
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    const record = await rig.readSession(id!);
    expect(record.runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps).toHaveLength(2);
    const transcript = anthropicTranscript(steps[1]!);
    expect(transcript).toContain('remember BRAVO-2');
    expect(transcript).toContain('First answer: ALPHA-1.');
    expect(transcript).toContain('what did I say?');
    expect(steps[1]!.headers['x-claude-code-session-id']).toBe(record.nativeSessionId);
    // Two processes: two session.started, the second resumed; history is not re-emitted.
    const started = (await rig.readEvents(id!)).filter((e) => e.type === 'session.started');
    expect(started.map((e) => e.resumed)).toEqual([false, true]);
    // The version facts claude announced on system/init (claude_code_version), as its probe reads them.
    expect(started.map((e) => e.versionFacts)).toEqual([
      { claudeCodeVersion: CLAUDE_TEST_VERSION },
      { claudeCodeVersion: CLAUDE_TEST_VERSION },
    ]);
    const messages = (await rig.readEvents(id!)).filter((e) => e.type === 'assistant.message');
    expect(messages.map((e) => e.text)).toEqual(['First answer: ALPHA-1.', 'Second answer.']);
  });
});
