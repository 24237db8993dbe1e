import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../core/adapter.js';
import { createPermissionDecider, PermissionPolicySchema } from '../../core/permissions/index.js';
import { createTtyEscalator } from '../../cli/tty-escalator.js';

const SECRET = 'sk-live-0123456789abcdef';

// A fake terminal: `input` is what the person types, `screen` what the escalator printed.
function terminal(signal?: AbortSignal) {
  const input = new PassThrough();
  let screen = '';
  const waiters: Array<{ text: string; count: number; resolve: () => void }> = [];
  const check = (): void => {
    for (const waiter of [...waiters]) {
      if (screen.split(waiter.text).length - 1 >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      screen += chunk.toString();
      check();
      done();
    },
  });
  const escalator = createTtyEscalator({ input, output, redact: (text) => text.replaceAll(SECRET, '***'), ...(signal ? { signal } : {}) });
  return {
    input,
    escalator,
    screen: () => screen,
    /** Resolves once `text` has been printed `count` times in all. */
    shown: (text: string, count = 1) =>
      new Promise<void>((resolve) => {
        waiters.push({ text, count, resolve });
        check();
      }),
    type: (text: string) => input.write(text),
  };
}

const execAsk = (command: string, requestId = 'req-1'): PermissionAsk => ({
  requestId,
  kind: 'tool',
  tools: [
    {
      toolUseId: `call-${requestId}`,
      name: 'Execute',
      kind: 'execute',
      label: `execute: ${command}`,
      command,
      impact: 'medium',
      input: { command },
    },
  ],
  options: ['allow-once', 'allow-session', 'deny'],
});

// droid 0.225.2's ask_user questions (captures/ask-user.jsonl).
const questionAsk: PermissionAsk = {
  requestId: 'req-q',
  kind: 'question',
  tools: [{ toolUseId: 'call_1_0', name: 'AskUser', kind: 'other', label: 'AskUser', input: {} }],
  options: [],
  questions: [
    { index: 1, topic: 'Color', question: 'Which color should the button be?', options: ['Red', 'Blue'], multiSelect: false },
    { index: 2, topic: 'Sizes', question: 'Which sizes do you want?', options: ['Small', 'Large'], multiSelect: true },
  ],
};

const proposal = { reason: "command 'echo hi > f.txt' needs autonomy high (is low)" };

describe('createTtyEscalator: permission prompts', () => {
  it('shows the tool, the reason and the choices, and allows once on y', async () => {
    const t = terminal();
    const answer = t.escalator.ask(execAsk('echo hi > f.txt'), proposal);
    await t.shown('> ');
    expect(t.screen()).toContain('execute: echo hi > f.txt');
    expect(t.screen()).toContain('impact: medium');
    expect(t.screen()).toContain(proposal.reason);
    expect(t.screen()).toContain('[y] allow once  [a] allow for this session  [n] deny');
    t.type('y\n');
    expect(await answer).toMatchObject({ decision: 'allow', remember: false, by: 'human' });
  });

  it('remembers on a, denies on n (case and words accepted, CRLF tolerated)', async () => {
    const t = terminal();
    const first = t.escalator.ask(execAsk('make'), proposal);
    t.type('A\r\n');
    expect(await first).toMatchObject({ decision: 'allow', remember: true, by: 'human' });
    const second = t.escalator.ask(execAsk('make'), proposal);
    t.type('no\n');
    expect(await second).toMatchObject({ decision: 'deny', by: 'human' });
  });

  it('asks again after an unrecognised answer, and denies after three', async () => {
    const t = terminal();
    const retried = t.escalator.ask(execAsk('make'), proposal);
    t.type('maybe\n');
    await t.shown('please answer y, a or n');
    t.type('y\n');
    expect(await retried).toMatchObject({ decision: 'allow', by: 'human' });
    const given = t.escalator.ask(execAsk('make'), proposal);
    t.type('x\n\nz\n');
    expect(await given).toMatchObject({ decision: 'deny', by: 'human', reason: expect.stringContaining('no recognisable answer') });
  });

  it('denies when the input ends (Ctrl-D), and every later ask too', async () => {
    const t = terminal();
    const answer = t.escalator.ask(execAsk('make'), proposal);
    await t.shown('> ');
    t.input.end();
    expect(await answer).toMatchObject({ decision: 'deny', by: 'human', reason: expect.stringContaining('Ctrl-D') });
    expect(await t.escalator.ask(execAsk('make'), proposal)).toMatchObject({ decision: 'deny', by: 'human' });
  });

  it('prints the full command when the label is shortened, and never a secret', async () => {
    const t = terminal();
    const command = `curl -H "Authorization: Bearer ${SECRET}" https://example.test/very/long/path`;
    const ask = execAsk(command);
    ask.tools[0]!.label = 'execute: curl -H "Authorization…';
    const answer = t.escalator.ask(ask, { reason: `it mentions ${SECRET}` });
    await t.shown('> ');
    t.type('n\n');
    await answer;
    expect(t.screen()).toContain('command: curl -H "Authorization: Bearer ***" https://example.test/very/long/path');
    expect(t.screen()).not.toContain(SECRET);
  });

  it('asks one prompt at a time when asks arrive together', async () => {
    const t = terminal();
    const first = t.escalator.ask(execAsk('first-command', 'r1'), proposal);
    const second = t.escalator.ask(execAsk('second-command', 'r2'), proposal);
    await t.shown('> ');
    expect(t.screen()).toContain('first-command');
    expect(t.screen()).not.toContain('second-command');
    t.type('y\n');
    expect(await first).toMatchObject({ decision: 'allow' });
    await t.shown('second-command');
    t.type('n\n');
    expect(await second).toMatchObject({ decision: 'deny' });
  });

  it('releases the input between prompts', async () => {
    const t = terminal();
    const answer = t.escalator.ask(execAsk('make'), proposal);
    await t.shown('> ');
    expect(t.input.isPaused()).toBe(false);
    t.type('y\n');
    await answer;
    expect(t.input.isPaused()).toBe(true);
    expect(t.input.listenerCount('data')).toBe(0);
  });

  it('declines the open and the queued prompts on abort without printing the queued one', async () => {
    const abort = new AbortController();
    const t = terminal(abort.signal);
    const open = t.escalator.ask(execAsk('open-command', 'r1'), proposal);
    const queued = t.escalator.ask(execAsk('queued-command', 'r2'), proposal);
    await t.shown('> ');
    abort.abort();
    expect(await open).toMatchObject({ decision: 'deny', by: 'policy', reason: expect.stringContaining('abandoned') });
    expect(await queued).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(t.screen()).not.toContain('queued-command');
    expect(t.input.listenerCount('data')).toBe(0);
  });
});

describe('createTtyEscalator: questions', () => {
  it('shows each question with numbered options and answers in droid ask_user shape', async () => {
    const t = terminal();
    const answer = t.escalator.ask(questionAsk, { reason: 'questions are always escalated' });
    await t.shown('> ');
    expect(t.screen()).toContain('Which color should the button be?');
    expect(t.screen()).toMatch(/1\) Red\n\s+2\) Blue/);
    t.type('2\n');
    await t.shown('> ', 2);
    expect(t.screen()).toContain('numbers separated by commas');
    t.type('1, 2\n');
    expect(await answer).toEqual({
      decision: 'allow',
      by: 'human',
      channel: 'terminal',
      reason: expect.any(String),
      answers: [
        { index: 1, question: 'Which color should the button be?', answer: 'Blue' },
        { index: 2, question: 'Which sizes do you want?', answer: 'Small, Large' },
      ],
    });
  });

  it('passes free text (and out-of-range numbers) through verbatim', async () => {
    const t = terminal();
    const answer = t.escalator.ask(questionAsk, { reason: 'q' });
    t.type('Green please\n7, 1\n');
    expect((await answer).answers).toEqual([
      { index: 1, question: 'Which color should the button be?', answer: 'Green please' },
      { index: 2, question: 'Which sizes do you want?', answer: '7, 1' },
    ]);
  });

  it('declines on an empty line', async () => {
    const t = terminal();
    const answer = t.escalator.ask(questionAsk, { reason: 'q' });
    t.type('1\n\n');
    expect(await answer).toMatchObject({ decision: 'deny', by: 'human', reason: 'the person declined to answer' });
  });

  it('declines on Ctrl-D', async () => {
    const t = terminal();
    const answer = t.escalator.ask(questionAsk, { reason: 'q' });
    await t.shown('> ');
    t.input.end();
    expect(await answer).toMatchObject({ decision: 'deny', by: 'human' });
    expect((await answer).answers).toBeUndefined();
  });

  it('declines a question ask without questions, without prompting', async () => {
    const t = terminal();
    const answer = await t.escalator.ask({ ...questionAsk, questions: [] }, { reason: 'q' });
    expect(answer).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(t.screen()).toBe('');
  });
});

describe('the TTY escalator behind createPermissionDecider', () => {
  it('auto-allows a command the person allowed for the session, without asking again', async () => {
    const t = terminal();
    const decide = createPermissionDecider({
      policy: PermissionPolicySchema.parse({}),
      autonomy: 'low',
      workspace: '/ws',
      escalator: t.escalator,
    });
    const first = decide(execAsk('make build', 'r1'));
    await t.shown('> ');
    t.type('a\n');
    expect(await first).toMatchObject({ decision: 'allow', by: 'human', escalated: true });
    expect(await decide(execAsk('make build', 'r2'))).toMatchObject({ decision: 'allow', by: 'policy', escalated: false });
    expect(t.screen().split('[y] allow once')).toHaveLength(2);
  });
});

describe('the TTY escalator on a real terminal', () => {
  it('does not keep the process alive while a prompt waits unanswered', async () => {
    const driver = fileURLToPath(new URL('../support/pty-run.py', import.meta.url));
    const child = fileURLToPath(new URL('../support/pty-escalator-child.ts', import.meta.url));
    const run = await execa('python3', [driver, '--timeout', '15', '--dialog', '[]', '--', process.execPath, '--import', 'tsx', child], {
      reject: false,
      timeout: 30_000,
      stdin: 'ignore',
    });
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('[y] allow once');
    expect(run.stdout).toContain('timer fired');
    const pid = Number(/pty-run: pid (\d+)/.exec(run.stderr)?.[1]);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
