import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeEventSchema } from '../../core/events/index.js';
import { SessionRecordSchema } from '../../core/store/index.js';
import { CliRigs } from '../support/one-works-cli.js';
import { lastUserText, toolResults } from '../support/scripted-model.js';
import { chatMessages, contentText } from '../support/scripted-model-steps.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// `one-works run` then `one-works send` in a second process: the second droid loads the native
// session the first one created, so the model sees the whole conversation, and the event log
// continues without duplicates even though the load replays the first turn's history.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

const FIRST_REPLY = 'First answer: the file is written.';
const SECOND_REPLY = 'Second answer: it still says first.';

const execute = (id: string, command: string) => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'harmless' } }],
});

describe('one-works send: a second process resumes the session', () => {
  it('loads the native conversation, continues the log without duplicates, and lists both runs', async () => {
    const model = await rigs.model({
      steps: [
        execute('call_resume_first_1', 'echo first > first.txt'),
        { text: FIRST_REPLY },
        execute('call_resume_second_1', 'cat first.txt'),
        { text: SECOND_REPLY },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });

    const first = await rig.run(['run', '--workspace', rig.workspace, 'first question']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const native = (await rig.readSession(id!)).nativeSessionId;
    expect(native).toEqual(expect.any(String));
    // keepWarmMs 0 (the rig's): the orchestrator closes the droid after the turn, after run exited.
    const firstCount = (await rig.closedEvents(id!)).length;

    const second = await rig.run(['send', id!, 'second question']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain(SECOND_REPLY);
    expect(await rig.sessionIds()).toEqual([id]);

    const record = await rig.readSession(id!);
    expect(record.nativeSessionId).toBe(native);
    expect(record.status).toBe('idle');
    expect(record.runs.map((r) => [r.id, r.prompt, r.status, r.text])).toEqual([
      ['r1', 'first question', 'completed', FIRST_REPLY],
      ['r2', 'second question', 'completed', SECOND_REPLY],
    ]);

    // The second process's first model call carries the first turn: prompt, tool result, reply.
    const resumedCall = model.requests.find((r) => r.kind === 'step' && r.stepIndex === 2)!;
    const messages = chatMessages(resumedCall).map((m) => `${String(m.role)}: ${contentText(m.content)}`);
    expect(messages.some((m) => m.startsWith('user: ') && m.includes('first question'))).toBe(true);
    expect(messages).toContain(`assistant: ${FIRST_REPLY}`);
    expect(toolResults(resumedCall).map((r) => r.toolCallId)).toEqual(['call_resume_first_1']);
    expect(lastUserText(resumedCall)).toContain('second question');

    const events = await rig.closedEvents(id!, 2);
    expect(events.length).toBeGreaterThan(firstCount);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const keys = events.map((e) => e.key);
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
    const started = events.filter((e) => e.type === 'session.started');
    expect(started.map((e) => [e.resumed, e.versionFacts])).toEqual([
      [false, { apiVersion: '1.0.0', protocolVersion: '1.220.0' }],
      [true, { apiVersion: '1.0.0', protocolVersion: '1.220.0' }],
    ]);
    expect(events.filter((e) => e.type === 'session.closed')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'turn.completed').map((e) => e.runId)).toEqual(['r1', 'r2']);
    // The replayed history added no second copy of the first turn's tool result or reply.
    const resultsOf = (toolUseId: string) => events.flatMap((e) => (e.type === 'tool.result' && e.toolUseId === toolUseId ? [e] : []));
    expect(resultsOf('call_resume_first_1')).toHaveLength(1);
    expect(resultsOf('call_resume_second_1')).toHaveLength(1);
    expect(resultsOf('call_resume_second_1')[0]?.output).toContain('first');
    expect(events.filter((e) => e.type === 'assistant.message' && e.text === FIRST_REPLY)).toHaveLength(1);
    // Everything the second process wrote comes after what the first wrote.
    expect(events.slice(firstCount).every((e) => e.seq > firstCount)).toBe(true);
    expect(
      events
        .slice(firstCount)
        .filter((e) => e.type === 'session.started')
        .map((e) => e.resumed),
    ).toEqual([true]);

    // Reading commands see both runs and every recorded event.
    const list = await rig.run(['--json', 'sessions', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout.split('\n').map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ id, status: 'idle', runs: 2, lastRun: { id: 'r2', status: 'completed', reason: 'completed' } }),
    ]);
    const listText = await rig.run(['sessions', 'list']);
    expect(listText.stdout).toContain(id);
    const show = await rig.run(['sessions', 'show', id!]);
    expect(show.exitCode, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/r1 {2}completed /);
    expect(show.stdout).toMatch(/r2 {2}completed /);
    expect(show.stdout).toContain('> first question');
    expect(show.stdout).toContain('> second question');
    const showJson = await rig.run(['--json', 'sessions', 'show', id!]);
    expect(SessionRecordSchema.parse(JSON.parse(showJson.stdout))).toEqual(record);
    const printed = await rig.run(['--json', 'events', id!]);
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stdout.split('\n').map((line) => RuntimeEventSchema.parse(JSON.parse(line)))).toEqual(events);
  });

  it('refuses to send to a session that does not exist', async () => {
    const model = await rigs.model({ steps: [] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const result = await rig.run(['send', 's-0000000000', 'hello?']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('s-0000000000');
    expect(model.requests).toEqual([]);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });
});
