import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../core/adapter.js';
import type { RuntimeEvent } from '../../core/events/index.js';
import { Output } from '../../cli/output.js';
import { createLiveRenderer } from '../../cli/render.js';
import { jsonTerminalSafe, terminalSafe } from '../../cli/terminal-text.js';
import { createTtyEscalator } from '../../cli/tty-escalator.js';

const ESC = '\u001b';
const BEL = '\u0007';
// OSC 52 (write the clipboard), CSI 2J (clear the screen), OSC 0 (set the title), 8-bit CSI.
const OSC52 = `${ESC}]52;c;cHduZWQ=${BEL}`;
const CLEAR = `${ESC}[2J`;
const TITLE = `${ESC}]0;owned${ESC}\\`;
const HOSTILE = `a\tb\n${OSC52}${CLEAR}${TITLE}\u009b31m\r\n\rend\u202e`;

// Anything a terminal acts on, apart from newline and tab.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('terminalSafe', () => {
  it('shows escape and control sequences visibly and keeps newlines and tabs', () => {
    const safe = terminalSafe(HOSTILE);
    expect(safe).not.toMatch(CONTROL);
    expect(safe).toBe('a\tb\n␛]52;c;cHduZWQ=␇␛[2J␛]0;owned␛\\\\u009b31m\n␍end\\u202e');
  });

  it('leaves printable text of any script alone', () => {
    const text = 'héllo — 日本語 ✓ ▸ 🙂 "quoted" \\n literal';
    expect(terminalSafe(text)).toBe(text);
  });

  it('is inert piecewise: a sequence split across streamed pieces is neutralised too', () => {
    const pieces = [`x${ESC}`, ']52;c;', `AAAA${BEL}`];
    expect(pieces.map(terminalSafe).join('')).not.toMatch(CONTROL);
  });
});

describe('jsonTerminalSafe', () => {
  it('keeps JSON exact: the value parses back byte for byte, with nothing a terminal acts on left raw', () => {
    const value = { text: `${HOSTILE}\u2028\u007f` };
    const json = jsonTerminalSafe(JSON.stringify(value));
    expect(json).not.toMatch(CONTROL);
    expect(json).not.toContain('\u2028');
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('human output paths', () => {
  const event = (type: string, extra: Record<string, unknown>): RuntimeEvent =>
    ({ sessionId: 's-1', seq: 1, at: '2026-01-01T00:00:00.000Z', key: `k-${type}`, type, ...extra }) as unknown as RuntimeEvent;
  const events = [
    event('assistant.delta', { messageId: 'm1', text: `streamed ${ESC}` }),
    event('assistant.delta', { messageId: 'm1', text: `]0;title${BEL}\n` }),
    event('assistant.message', { messageId: 'm1', text: 'ignored: streamed already' }),
    event('assistant.message', { messageId: 'm2', text: HOSTILE }),
    event('tool.call', { toolUseId: 't1', name: 'Execute', kind: 'execute', label: `execute: printf '${CLEAR}'`, phase: 'running' }),
    event('tool.result', { toolUseId: 't1', isError: true, output: `${OSC52} failed` }),
    event('error', { message: `agent said ${TITLE}` }),
    event('log', { level: 'warn', message: `warning ${CLEAR}` }),
  ];

  it('the live renderer (run, send, events) prints agent text inert', () => {
    const stdout = capture();
    const out = new Output({ json: false, stdout: stdout.stream });
    const render = createLiveRenderer(out);
    for (const e of events) render(e);
    expect(stdout.text()).not.toMatch(CONTROL);
    expect(stdout.text()).toContain('streamed ␛]0;title␇\n');
    expect(stdout.text()).toContain("✗ execute: printf '␛[2J' — ␛]52;c;cHduZWQ=␇ failed");
    expect(stdout.text()).toContain('a\tb\n␛]52;c;');
  });

  it('--json prints every event exact (escaped by JSON)', () => {
    const stdout = capture();
    const out = new Output({ json: true, stdout: stdout.stream });
    const render = createLiveRenderer(out);
    for (const e of events) render(e);
    expect(stdout.text()).not.toMatch(CONTROL);
    const parsed = stdout
      .text()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(parsed).toEqual(events);
  });

  it('diagnostics on stderr are inert too', () => {
    const stderr = capture();
    new Output({ json: true, stderr: stderr.stream }).info(`session title ${TITLE}`);
    expect(stderr.text()).toBe('session title ␛]0;owned␛\\\n');
  });

  it('permission prompts show the command, paths and questions inert', async () => {
    const screen = capture();
    const input = new PassThrough();
    const escalator = createTtyEscalator({ input, output: screen.stream, redact: (t) => t });
    const ask: PermissionAsk = {
      requestId: 'r1',
      kind: 'tool',
      tools: [
        {
          toolUseId: 't1',
          name: 'Execute',
          kind: 'execute',
          label: 'execute',
          command: `rm -rf x ${CLEAR}`,
          paths: [`/tmp/${OSC52}`],
          impact: 'high',
          input: {},
        },
      ],
      options: ['allow-once', 'allow-session', 'deny'],
    } as PermissionAsk;
    const answer = escalator.ask(ask, { decision: 'escalate', reason: `because ${TITLE}` } as never);
    input.write('n\n');
    await answer;
    const question: PermissionAsk = {
      requestId: 'r2',
      kind: 'question',
      tools: [],
      questions: [{ question: `pick ${OSC52}`, options: [`one ${CLEAR}`, 'two'], topic: `t${TITLE}` }],
      options: [],
    } as unknown as PermissionAsk;
    const answered = escalator.ask(question, { decision: 'escalate', reason: 'questions always escalate' } as never);
    input.write('1\n');
    await answered;
    expect(screen.text()).toContain('command: rm -rf x ␛[2J');
    expect(screen.text()).toContain('paths: /tmp/␛]52;c;cHduZWQ=␇');
    expect(screen.text()).toContain('pick ␛]52;');
    expect(screen.text()).toContain('1) one ␛[2J');
    expect(screen.text()).not.toMatch(CONTROL);
  });
});
