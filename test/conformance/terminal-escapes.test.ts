import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs } from '../support/one-works-cli.js';

// Agent text never drives the terminal: the real droid 0.225.2 relays model text, a tool's
// output and a command that carry an OSC 52 (clipboard write), a CSI 2J (clear screen) and an
// OSC 0 (window title) sequence; `run`, `send`, `events` and `sessions` print them inert (shown
// visibly, newlines and tabs kept), and `--json` prints them exact (escaped by JSON itself).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ESC = '\u001b';
const BEL = '\u0007';
const OSC52 = `${ESC}]52;c;cHduZWQ=${BEL}`;
const CLEAR = `${ESC}[2J`;
const TITLE = `${ESC}]0;owned${BEL}`;
const MODEL_TEXT = `Before\tthe sequences.\n${OSC52}${CLEAR}${TITLE}After them.`;
const SECOND_TEXT = `Second turn ${TITLE}${CLEAR} done.`;
// The tool prints the sequences itself (printf turns \033 into ESC) and fails; the command also
// carries a raw ESC (shown in its label). The human views show a tool's output only as the first
// line of a failed result, which droid 0.225.2 fills with its own "Error: Command failed (exit
// code: 3)": the raw output is in the record and in --json, and nowhere raw on the terminal.
const COMMAND = `echo 'label ${CLEAR}'; printf '\\033]52;c;cHduZWQ=\\007\\033[2J\\033]0;owned\\007tool output\\n'; exit 3`;

// Anything a terminal acts on, apart from newline and tab.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('agent text reaches the terminal inert', () => {
  it('in run, send, events and sessions; exact under --json', async () => {
    const model = await rigs.model({
      titleReply: `Title ${TITLE}`,
      steps: [
        {
          toolCalls: [
            {
              id: 'esc_call_1',
              name: 'Execute',
              arguments: { command: COMMAND, riskLevel: 'low', riskLevelReason: 'prints text' },
            },
            // A failing tool whose error (the first line of its output, shown by `run`) quotes agent text.
            { id: 'esc_call_2', name: 'LS', arguments: { directory_path: `/nonexistent/${OSC52}${TITLE}` } },
          ],
        },
        { text: MODEL_TEXT },
        { text: SECOND_TEXT },
        { text: MODEL_TEXT },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });

    const run = await rig.run(['run', '--workspace', rig.workspace, 'print something']);
    expect(run.exitCode, run.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const send = await rig.run(['send', id!, 'again']);
    expect(send.exitCode, send.stderr).toBe(0);
    const events = await rig.run(['events', id!]);
    const sessions = await rig.run(['sessions']);
    const show = await rig.run(['sessions', 'show', id!]);

    // What droid relayed really carried the sequences (the record keeps them exact) ...
    const logged = await rig.readEvents(id!);
    const result = logged.find((e): e is Extract<RuntimeEvent, { type: 'tool.result' }> => e.type === 'tool.result');
    expect(result?.isError).toBe(true);
    expect(result?.output).toContain(`${OSC52}${CLEAR}${TITLE}tool output`);
    // The span is re-emitted as its arguments stream in; the last label holds the whole command.
    const labels = logged.flatMap((e) => (e.type === 'tool.call' && e.toolUseId === 'esc_call_1' ? [e.label] : []));
    expect(labels.at(-1)).toContain(CLEAR);
    const messages = logged.filter((e): e is Extract<RuntimeEvent, { type: 'assistant.message' }> => e.type === 'assistant.message');
    expect(messages.map((m) => m.text)).toEqual([MODEL_TEXT, SECOND_TEXT]);

    // ... and no command printed one of them: they are shown as visible text.
    for (const [name, output] of Object.entries({ run, send, events, sessions, show })) {
      expect(output.stdout, `${name} stdout`).not.toMatch(CONTROL);
      expect(output.stderr, `${name} stderr`).not.toMatch(CONTROL);
    }
    expect(run.stdout).toContain('Before\tthe sequences.\n␛]52;c;cHduZWQ=␇␛[2J␛]0;owned␇After them.');
    expect(run.stdout).toContain("✗ execute: echo 'label ␛[2J'");
    expect(run.stdout).toContain('✗ search: /nonexistent/␛]52;c;cHduZWQ=␇␛]0;owned␇ — Error: Failed to list directory');
    expect(send.stdout).toContain('Second turn ␛]0;owned␇␛[2J done.');
    expect(events.stdout).toContain('␛]52;c;cHduZWQ=␇␛[2J␛]0;owned␇After them.');
    expect(events.stdout).toContain('Second turn ␛]0;owned␇␛[2J done.');
    if ((await rig.readSession(id!)).title !== undefined) expect(sessions.stdout).toContain('Title ␛]0;owned␇');

    // --json: one exact JSON value a line, the sequences escaped by JSON (no raw control byte).
    const jsonEvents = await rig.run(['--json', 'events', id!]);
    const jsonRun = await rig.run(['--json', 'run', '--workspace', rig.workspace, 'once more']);
    expect(jsonRun.exitCode, jsonRun.stderr).toBe(0);
    for (const output of [jsonEvents, jsonRun]) expect(output.stdout).not.toMatch(CONTROL);
    const parsed = jsonEvents.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as RuntimeEvent);
    expect(parsed).toEqual(logged);
    const runMessages = jsonRun.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; text?: string })
      .filter((e) => e.type === 'assistant.message');
    expect(runMessages.map((m) => m.text)).toEqual([MODEL_TEXT]);
  });
});
