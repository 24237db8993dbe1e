import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { isAlive, waitForNoProcesses } from '../support/rig-processes.js';
import { runInPty } from '../support/pty-cli.js';
import { toolResults, type ScriptedModel, type Step } from '../support/scripted-model.js';

// The model calls droid's AskUser tool; droid sends droid.ask_user, which the policy always
// escalates. On a terminal the person answers; without one the question is declined.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The AskUser input of captures/ask-user.jsonl (droid 0.225.2): one numbered questionnaire string.
const QUESTIONNAIRE = [
  '1. [question] Which color should the button be?',
  '[topic] Color',
  '[option] Red',
  '[option] Blue',
  '',
  '2. [question] Which sizes do you want? (multi)',
  '[topic] Sizes',
  '[option] Small',
  '[option] Large',
  '',
].join('\n');
const COLOR = 'Which color should the button be?';
const SIZES = 'Which sizes do you want?';

const steps = (): Step[] => [
  { toolCalls: [{ id: 'call_ask', name: 'AskUser', arguments: { questionnaire: QUESTIONNAIRE } }] },
  (request) => ({ text: `Got: ${toolResults(request)[0]?.content.replace(/\s+/g, ' ').trim() ?? '(nothing)'}` }),
];

// What the model was told the AskUser tool returned, if it was asked again at all.
const toolResultSeen = (model: ScriptedModel): string | undefined => {
  const followUp = model.requests.filter((r) => r.kind === 'step')[1];
  return followUp === undefined ? undefined : toolResults(followUp)[0]?.content;
};

describe('AskUser questions with the real droid', () => {
  it('are answered on the terminal by number, several numbers and the answers reach the model', async () => {
    const model = await rigs.model({ steps: steps() });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const pty = await runInPty(
      rig,
      ['run', '--workspace', rig.workspace, 'ask me'],
      [
        { expect: String.raw`2\) Blue[\s\S]*> `, send: '2\r' },
        { expect: String.raw`2\) Large[\s\S]*> `, send: '1,2\r' },
      ],
    );
    expect(pty.diagnostics, pty.screen).toBe('');
    expect(pty.exitCode, pty.screen).toBe(0);
    expect(pty.screen).toContain('[one-works] question from the agent (1 of 2) — Color');

    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    const asked = events.find((e) => e.type === 'question.asked');
    // The event carries the typed question (core AskQuestion): multiSelect is always set.
    expect(asked?.questions).toEqual([
      { index: 1, topic: 'Color', question: COLOR, options: ['Red', 'Blue'], multiSelect: false },
      { index: 2, topic: 'Sizes', question: SIZES, options: ['Small', 'Large'], multiSelect: true },
    ]);
    expect(events.find((e) => e.type === 'question.answered')).toMatchObject({
      requestId: asked?.requestId,
      cancelled: false,
      by: 'human',
      answers: [
        { index: 1, question: COLOR, answer: 'Blue' },
        { index: 2, question: SIZES, answer: 'Small, Large' },
      ],
    });
    expect(toolResultSeen(model)).toContain('Blue');
    expect(toolResultSeen(model)).toContain('Small, Large');
    const record = await rig.readSession(id!);
    expect(record).toMatchObject({ status: 'idle', runs: [{ status: 'completed' }] });
    expect(isAlive(pty.pid)).toBe(false);
    expect(await waitForNoProcesses(() => rig.processes(), 5_000)).toEqual([]);
  });

  it('take free text verbatim', async () => {
    const model = await rigs.model({ steps: steps() });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const pty = await runInPty(
      rig,
      ['run', '--workspace', rig.workspace, 'ask me'],
      [
        { expect: String.raw`2\) Blue[\s\S]*> `, send: 'teal, like the logo\r' },
        { expect: String.raw`2\) Large[\s\S]*> `, send: '2\r' },
      ],
    );
    expect(pty.exitCode, pty.screen).toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readEvents(id!)).find((e) => e.type === 'question.answered')).toMatchObject({
      by: 'human',
      answers: [
        { index: 1, question: COLOR, answer: 'teal, like the logo' },
        { index: 2, question: SIZES, answer: 'Large' },
      ],
    });
  });

  it('are declined when the person enters an empty line: cancelled, and the model is not called again', async () => {
    const model = await rigs.model({ steps: steps() });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const pty = await runInPty(
      rig,
      ['run', '--workspace', rig.workspace, 'ask me'],
      [{ expect: String.raw`2\) Blue[\s\S]*> `, send: '\r' }],
    );
    expect(pty.exitCode, pty.screen).toBe(0);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'question.answered')).toMatchObject({ cancelled: true, by: 'human', answers: [] });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_ask', isError: true });
    expect(model.pending()).toBe(1);
    expect((await rig.readSession(id!)).status).toBe('idle');
  });

  it('are declined without a terminal, recorded as cancelled by policy, and leave the session needing attention', async () => {
    const model = await rigs.model({ steps: steps() });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const result = await rig.run(['run', '--workspace', rig.workspace, 'ask me']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(events.filter((e) => e.type.startsWith('question.')).map((e) => e.type)).toEqual(['question.asked', 'question.answered']);
    expect(events.find((e) => e.type === 'question.answered')).toMatchObject({ cancelled: true, by: 'policy', answers: [] });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_ask', isError: true });
    expect(model.pending()).toBe(1);
    expect(result.stdout).toContain('question declined by policy');

    const record = await rig.readSession(id!);
    expect(record.status).toBe('needs_attention');
    expect(record.attention?.join('\n')).toContain(`the agent's question "${COLOR}" was declined`);
    expect(await waitForNoProcesses(() => rig.processes(), 5_000)).toEqual([]);
  });
});
