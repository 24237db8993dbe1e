import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isNotification, notificationOf, startRawDroid } from '../support/raw-droid-client.js';
import type { RawDroidClient, RawFrame } from '../support/raw-droid-client.js';
import { droidCustomModel, startScriptedModel, toolResults } from '../support/scripted-model.js';
import type { ScriptedModel, Step } from '../support/scripted-model.js';

// The real droid binary; the conformance global setup installs it with the managed installer.
let droidBinary: string;

beforeAll(() => {
  const binary = process.env.ONE_WORKS_TEST_DROID;
  if (binary === undefined || binary === '') {
    throw new Error(
      'ONE_WORKS_TEST_DROID is not set: it must name the real droid binary (the conformance global setup installs it; ' +
        'for a local run, e.g. ONE_WORKS_TEST_DROID=/path/to/droid npx vitest run --project conformance).',
    );
  }
  droidBinary = binary;
});

const API_KEY = 'sk-conformance-secret';

interface Rig {
  model: ScriptedModel;
  client: RawDroidClient;
  workspace: string;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// One isolated HOME and workspace, one scripted model, one real droid in an initialised session.
async function rig(steps: Step[], autonomyLevel: string): Promise<Rig> {
  const root = await mkdtemp(join(tmpdir(), 'ow-conf-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  await Promise.all([mkdir(home), mkdir(workspace)]);
  const model = await startScriptedModel({ steps });
  cleanups.push(() => model.close());
  const { entry, modelId } = droidCustomModel(model.baseUrl, { displayName: 'Scripted', apiKey: API_KEY });
  const client = await startRawDroid({ binary: droidBinary, cwd: workspace, home, settings: { customModels: [entry] } });
  cleanups.push(async () => {
    await client.close();
    expectNoProcess(client.pid);
    expectNoProcess(-client.pid); // nothing left in its process group either (Execute children)
  });
  await client.request('droid.initialize_session', { machineId: 'conformance', cwd: workspace });
  await client.request('droid.update_session_settings', { modelId, autonomyLevel });
  return { model, client, workspace };
}

function expectNoProcess(pid: number): void {
  let code: string | undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    code = (error as NodeJS.ErrnoException).code;
  }
  expect(code).toBe('ESRCH');
}

const notifications = (frames: RawFrame[], type: string): Record<string, unknown>[] =>
  frames.filter((frame) => isNotification(frame, type)).map((frame) => notificationOf(frame) ?? {});

describe('real droid against the scripted model', () => {
  it('completes a text turn with the scripted text', async () => {
    const text = 'Hello from the scripted model.';
    const { model, client } = await rig([{ text }], 'low');
    const turn = await client.runTurn('say hello');
    expect(turn.completion).toMatchObject({ reason: 'completed', turnId: turn.turnId });
    expect(
      notifications(turn.frames, 'assistant_text_delta')
        .map((n) => n.textDelta)
        .join(''),
    ).toBe(text);
    const assistant = notifications(turn.frames, 'create_message').find((n) => (n.message as { role: string }).role === 'assistant');
    expect(assistant?.message).toMatchObject({ content: [{ type: 'text', text }] });
    expect(model.pending()).toBe(0);
    const steps = model.requests.filter((request) => request.kind === 'step');
    expect(steps).toHaveLength(1);
    expect(steps[0]?.body).toMatchObject({ stream: true, model: 'scripted' });
  });

  it('asks permission for a medium-risk Execute at autonomy low and runs it after proceed_once', async () => {
    const steps: Step[] = [
      {
        toolCalls: [
          {
            id: 'call_exec',
            name: 'Execute',
            arguments: { command: 'echo hi > out.txt', riskLevel: 'medium', riskLevelReason: 'writes a file' },
          },
        ],
      },
      (request) => ({ text: `Tool said: ${toolResults(request)[0]?.content.trim() ?? '(nothing)'}` }),
    ];
    const { model, client, workspace } = await rig(steps, 'low');
    const turn = await client.runTurn('make a file');
    expect(turn.completion.reason).toBe('completed');

    const asks = turn.frames.filter((frame) => frame.type === 'request' && frame.method === 'droid.request_permission');
    expect(asks).toHaveLength(1);
    const toolUse = (asks[0]!.params as { toolUses: { toolUse: { name: string; input: { command: string } } }[] }).toolUses[0]?.toolUse;
    expect(toolUse).toMatchObject({ name: 'Execute', input: { command: 'echo hi > out.txt' } });
    expect(notifications(turn.frames, 'permission_resolved')[0]).toMatchObject({ selectedOption: 'proceed_once' });
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');

    const conversation = model.requests.filter((request) => request.kind === 'step');
    expect(conversation).toHaveLength(2);
    expect(toolResults(conversation[1] as (typeof conversation)[number]).map((result) => result.toolCallId)).toEqual(['call_exec']);
    for (const request of model.requests) expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });
});
