import { access, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { processEnv, waitForNoProcesses } from '../support/rig-processes.js';
import { lastUserText, toolResults } from '../support/scripted-model.js';
import { chatMessages } from '../support/scripted-model-steps.js';
import { filesContaining, HARNESS, referenceRig } from './process-runner-support.js';

// `one-works run --adapter process:ref`: the reference runner (a real model loop in the repo,
// adapters/process-runner/reference/openai-runner.mjs) against the scripted chat-completions
// server on 127.0.0.1. One Works owns the tools; the runner owns the conversation.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;
const AGENT_CLOSE_MS = 15_000;

describe('process runner: the reference runner', () => {
  it('runs a text turn: streamed text becomes the outcome, usage is recorded, the key reaches the model only via the open frame', async () => {
    let runnerEnv: Record<string, string> = {};
    const { rig, model } = await referenceRig(rigs, [
      () => {
        const runner = rig.processes().find((p) => p.args.includes('openai-runner.mjs'));
        runnerEnv = runner ? processEnv(runner.pid) : {};
        return { text: 'Hello from the scripted model.', usage: { prompt_tokens: 12, completion_tokens: 5 } };
      },
    ]);
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'say hello']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toContain('Hello from the scripted model.');

    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe(ADAPTER);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'Hello from the scripted model.' });
    expect(record.runs[0]!.usage).toMatchObject({ reported: true, inputTokens: 12, outputTokens: 5 });
    const events = await rig.closedEvents(id!);
    expect(events.find((e) => e.type === 'session.started')).toMatchObject({
      adapter: ADAPTER,
      resumed: false,
      versionFacts: { api: 'runner-frame', protocolVersion: '1.0.0' },
    });
    expect(events.find((e) => e.type === 'assistant.message')).toMatchObject({ text: 'Hello from the scripted model.' });

    // The runner called the model with the key it got in `open`, and with the prompt.
    const step = model.requests.find((r) => r.kind === 'step')!;
    expect(step.headers.authorization).toBe(`Bearer ${RIG_API_KEY}`);
    expect(lastUserText(step)).toBe('say hello');
    // Its environment: the allowlist and the session HOME, no credential.
    expect(runnerEnv.HOME).toBe(rig.sessionHome(id!));
    expect(runnerEnv.NO_COLOR).toBe('1');
    expect(JSON.stringify(runnerEnv)).not.toContain(RIG_API_KEY);
    // Nothing One Works wrote holds the key (byte search), nor what it printed.
    expect(await filesContaining(rig.stateDir, RIG_API_KEY)).toEqual([]);
    expect(result.stdout + result.stderr).not.toContain(RIG_API_KEY);
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });

  it('runs a tool call (run_command) that writes a file in the workspace; the model sees its output', async () => {
    const { rig, model } = await referenceRig(
      rigs,
      [
        {
          text: 'Writing.',
          toolCalls: [{ id: 'call_w', name: 'run_command', arguments: { command: 'echo hi > proof.txt && cat proof.txt' } }],
        },
        (request) => ({ text: `The tool said: ${toolResults(request)[0]?.content ?? '(nothing)'}` }),
      ],
      { autonomy: 'high' },
    );
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'write a file']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(await readFile(join(rig.workspace, 'proof.txt'), 'utf8')).toBe('hi\n');

    const [id] = await rig.sessionIds();
    const events = await rig.closedEvents(id!);
    expect(events.find((e) => e.type === 'tool.call')).toMatchObject({ toolUseId: 'call_w', name: 'run_command', kind: 'execute' });
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'allow', by: 'policy' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_w', isError: false });
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(toolResults(steps[1]!)[0]).toMatchObject({ toolCallId: 'call_w', content: 'hi\n(exit code 0)' });
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'The tool said: hi\n(exit code 0)' });
  });

  it('a policy-denied command stays unrun (file absent), goes back as is_error, and the turn completes', async () => {
    const { rig, model } = await referenceRig(
      rigs,
      [
        { toolCalls: [{ id: 'call_d', name: 'run_command', arguments: { command: 'touch denied.txt' } }] },
        (request) => ({ text: `Result: ${toolResults(request)[0]?.content ?? '(nothing)'}` }),
      ],
      { autonomy: 'high' },
      { deny: ['touch'] },
    );
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'touch a file']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    await expect(access(join(rig.workspace, 'denied.txt'))).rejects.toThrow();

    const [id] = await rig.sessionIds();
    const events = await rig.closedEvents(id!);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_d', isError: true });
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(toolResults(steps[1]!)[0]?.content).toContain('denied');
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed' });
  });

  it('an unknown tool and bad arguments go back as is_error results, never a crash', async () => {
    const { rig, model } = await referenceRig(rigs, [
      {
        toolCalls: [
          { id: 'call_u', name: 'no_such_tool', arguments: {} },
          { id: 'call_b', name: 'read_file', arguments: { file: 'x' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'call odd tools']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    const results = toolResults(model.requests.filter((r) => r.kind === 'step')[1]!);
    expect(results[0]!.content).toContain('unknown tool "no_such_tool"');
    expect(results[1]!.content).toContain('invalid arguments for read_file');
  });

  it('send: a second turn in a new runner process reopens passively and carries the first', async () => {
    const { rig, model } = await referenceRig(rigs, [{ text: 'First answer: ALPHA-1.' }, { text: 'Second answer.' }]);
    const first = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const before = model.requests.length;

    const second = await rig.run(['send', id!, 'what did I ask?']);
    expect(second.exitCode, second.stderr).toBe(0);
    const events = await rig.closedEvents(id!, 2);
    const started = events.filter((e) => e.type === 'session.started');
    expect(started.map((e) => (e as { resumed: boolean }).resumed)).toEqual([false, true]);
    // Passive reopen: exactly one more model request, the second prompt's, carrying the first turn.
    expect(model.requests.length).toBe(before + 1);
    const messages = chatMessages(model.requests.at(-1)!).map((m) => `${String(m.role)}:${String(m.content)}`);
    expect(messages.slice(1)).toEqual(['user:remember BRAVO-2', 'assistant:First answer: ALPHA-1.', 'user:what did I ask?']);
  });

  it('checkpoint fidelity: a native directory restored from the checkpoint gives the model the same context', async () => {
    const { rig, model } = await referenceRig(rigs, [{ text: 'First answer: ALPHA-1.' }, { text: 'Second answer.' }]);
    const first = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const record = await rig.readSession(id!);
    const checkpoint = join(rig.stateDir, 'sessions', id!, 'runner-checkpoints', record.nativeSessionId!, 'r1');
    const saved = await readFile(join(checkpoint, 'files', 'conversation.jsonl'), 'utf8');
    expect(saved.split('\n').filter(Boolean)).toHaveLength(2);
    // The runner's directory is lost (a fresh disk): One Works restores it before opening.
    const dir = join(rig.sessionHome(id!), 'runner', record.nativeSessionId!);
    await rm(dir, { recursive: true });

    const second = await rig.run(['send', id!, 'what did I ask?']);
    expect(second.exitCode, second.stderr).toBe(0);
    const events = await rig.closedEvents(id!, 2);
    expect(events.find((e) => e.type === 'log' && e.message.startsWith('restored the runner'))).toBeDefined();
    const messages = chatMessages(model.requests.at(-1)!).map((m) => `${String(m.role)}:${String(m.content)}`);
    expect(messages.slice(1)).toEqual(['user:remember BRAVO-2', 'assistant:First answer: ALPHA-1.', 'user:what did I ask?']);
    // The second checkpoint extends the first (append-only).
    const next = await readFile(
      join(rig.stateDir, 'sessions', id!, 'runner-checkpoints', record.nativeSessionId!, 'r2', 'files', 'conversation.jsonl'),
      'utf8',
    );
    expect(next.startsWith(saved)).toBe(true);
  });
});
