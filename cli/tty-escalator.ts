import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { AskQuestion, PermissionAsk, QuestionAnswer } from '../core/adapter.js';
import { answerText, type EscalationAnswer, type Escalator } from '../core/permissions/index.js';
import type { TextSink } from './stdio.js';
import { terminalSafe } from './terminal-text.js';

/**
 * The escalator of an interactive `one-works run`/`send`: asks the person at the controlling
 * terminal. Permission asks take one line (`y`, `a` or `n`); questions show numbered options and
 * take a number, comma-separated numbers (multi-select) or free text. Prompts go to `output`
 * (stderr), one at a time, with the agent's text made inert (`terminalSafe`).
 */
export interface TtyEscalatorOptions {
  /**
   * The terminal's input. Read only while a prompt is open, paused in between, and unref'd
   * (when it can be), so a prompt never keeps the process alive by itself.
   */
  input: Readable;
  /** Where prompts are written (stderr, so stdout keeps the live view or JSON). Never closed here. */
  output: TextSink;
  /** Applied to every text written (the CLI's `Output.redact`), so no secret is ever printed. */
  redact: (text: string) => string;
  /** When aborted, the open prompt and every queued one are declined and the input is released. */
  signal?: AbortSignal;
}

// The One Works answers as keys; `a` only when the ask offers allow-session.
function choicesLine(ask: PermissionAsk): string {
  return ask.options.includes('allow-session') ? '[y] allow once  [a] allow for this session  [n] deny' : '[y] allow once  [n] deny';
}
// Unrecognised replies to a permission prompt before it counts as a denial.
const MAX_ATTEMPTS = 3;

/**
 * Creates the TTY escalator. Asks arriving while a prompt is open wait their turn (serialized).
 * Answers are `by: 'human'` through the `terminal` channel; an abandoned prompt (end of input,
 * abort) is a denial. Question answers are typed ({@link QuestionAnswer}). A prompt whose
 * `proposal.signal` aborts (answered elsewhere) says so and is dropped. Never rejects.
 */
export function createTtyEscalator(options: TtyEscalatorOptions): Escalator {
  const reader = new LineReader(options.input, options.signal);
  // Commands, paths, questions and options are the agent's text: inert before they are shown.
  const write = (text: string): void => {
    options.output.write(terminalSafe(options.redact(text)));
  };
  let tail: Promise<unknown> = Promise.resolve();
  return {
    ask(ask, proposal) {
      const turn = tail.then(async (): Promise<EscalationAnswer> => {
        if (reader.aborted) return ABANDONED;
        if (proposal.signal?.aborted) return ANSWERED_ELSEWHERE;
        reader.promptSignal = proposal.signal;
        try {
          const answer =
            ask.kind === 'question' ? await askQuestions(ask, reader, write) : await askPermission(ask, proposal.reason, reader, write);
          if (proposal.signal?.aborted && !reader.aborted) {
            write(`\n[one-works] answered elsewhere (${String(proposal.signal.reason ?? 'another channel')})\n`);
            return ANSWERED_ELSEWHERE;
          }
          return { ...answer, channel: 'terminal' };
        } finally {
          reader.promptSignal = undefined;
        }
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
  };
}

async function askPermission(
  ask: PermissionAsk,
  reason: string,
  reader: LineReader,
  write: (text: string) => void,
): Promise<EscalationAnswer> {
  const count = ask.tools.length === 1 ? 'a tool call' : `${ask.tools.length} tool calls`;
  const lines = [`\n[one-works] permission needed for ${count}:`];
  for (const tool of ask.tools) {
    lines.push(`  • ${tool.label}${tool.impact ? `  (impact: ${tool.impact})` : ''}`);
    if (tool.command !== undefined && !tool.label.endsWith(tool.command))
      lines.push(`    command: ${tool.command.replace(/\n/g, '\n             ')}`);
    if (tool.paths?.length) lines.push(`    paths: ${tool.paths.join(', ')}`);
  }
  const choices = choicesLine(ask);
  const session = ask.options.includes('allow-session');
  lines.push(`  asked because ${reason}`, `  ${choices}`);
  write(`${lines.join('\n')}\n`);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    write('  > ');
    const line = await reader.next();
    if (line === undefined) return abandoned(reader, write);
    const choice = line.trim().toLowerCase();
    if (choice === 'y' || choice === 'yes')
      return { decision: 'allow', remember: false, by: 'human', reason: 'allowed once by the person at the terminal' };
    if (session && (choice === 'a' || choice === 'always'))
      return { decision: 'allow', remember: true, by: 'human', reason: 'allowed for this session by the person at the terminal' };
    if (choice === 'n' || choice === 'no') return { decision: 'deny', by: 'human', reason: 'denied by the person at the terminal' };
    write(`  please answer ${session ? 'y, a or n' : 'y or n'}: ${choices}\n`);
  }
  return { decision: 'deny', by: 'human', reason: `denied: no recognisable answer after ${MAX_ATTEMPTS} attempts` };
}

async function askQuestions(ask: PermissionAsk, reader: LineReader, write: (text: string) => void): Promise<EscalationAnswer> {
  const questions: AskQuestion[] = ask.questions ?? [];
  if (questions.length === 0) return { decision: 'deny', by: 'policy', reason: 'the agent asked a question without any text' };
  const answers: QuestionAnswer[] = [];
  for (const [position, question] of questions.entries()) {
    const of = questions.length > 1 ? ` (${position + 1} of ${questions.length})` : '';
    const lines = [`\n[one-works] question from the agent${of}${question.topic ? ` — ${question.topic}` : ''}`, `  ${question.question}`];
    for (const [i, option] of question.options.entries()) lines.push(`    ${i + 1}) ${option}`);
    const how =
      question.options.length === 0
        ? 'type your answer'
        : question.multiSelect
          ? 'answer with numbers separated by commas (e.g. 1,2) or type your own answer'
          : 'answer with a number or type your own answer';
    lines.push(`  ${how}; an empty line or Ctrl-D declines`);
    write(`${lines.join('\n')}\n  > `);
    const line = await reader.next();
    if (line === undefined) return abandoned(reader, write);
    if (line.trim() === '') return { decision: 'deny', by: 'human', reason: 'the person declined to answer' };
    answers.push({ index: question.index, question: question.question, answer: answerText(question, line.trim()) });
  }
  return { decision: 'allow', by: 'human', answers, reason: 'answered by the person at the terminal' };
}

const ANSWERED_ELSEWHERE: EscalationAnswer = { decision: 'deny', by: 'policy', reason: 'answered through another channel' };

const ABANDONED: EscalationAnswer = { decision: 'deny', by: 'policy', reason: 'the prompt was abandoned (the turn was interrupted)' };

// A prompt that got no answer: end of input (Ctrl-D) or an abort.
function abandoned(reader: LineReader, write: (text: string) => void): EscalationAnswer {
  write('\n');
  return reader.aborted ? ABANDONED : { decision: 'deny', by: 'human', reason: 'the person closed the input (Ctrl-D) without answering' };
}

/** Reads lines on demand: listens (and flows) only while a caller waits for one. */
class LineReader {
  readonly #input: Readable;
  readonly #signal: AbortSignal | undefined;
  readonly #decoder = new StringDecoder('utf8');
  #buffer = '';
  #ended = false;
  /** Aborts the prompt being read (its ask was answered elsewhere); the reader stays usable. */
  promptSignal: AbortSignal | undefined;

  constructor(input: Readable, signal: AbortSignal | undefined) {
    this.#input = input;
    this.#signal = signal;
  }

  get aborted(): boolean {
    return this.#signal?.aborted === true;
  }

  /** The next line without its line break; undefined at end of input or once aborted. */
  next(): Promise<string | undefined> {
    const ready = this.#take();
    if (this.#input.readableEnded) this.#ended = true;
    const prompt = this.promptSignal;
    if (ready !== undefined || this.#ended || this.aborted) return Promise.resolve(ready ?? this.#rest());
    if (prompt?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const finish = (line: string | undefined): void => {
        this.#input.off('data', onData).off('end', onEnd).off('error', onEnd);
        this.#signal?.removeEventListener('abort', onAbort);
        prompt?.removeEventListener('abort', onAbort);
        this.#input.pause();
        resolve(line);
      };
      const onData = (chunk: Buffer | string): void => {
        this.#buffer += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
        const line = this.#take();
        if (line !== undefined) finish(line);
      };
      const onEnd = (): void => {
        this.#ended = true;
        finish(this.#rest());
      };
      const onAbort = (): void => finish(undefined);
      this.#input.on('data', onData).once('end', onEnd).once('error', onEnd);
      this.#signal?.addEventListener('abort', onAbort, { once: true });
      prompt?.addEventListener('abort', onAbort, { once: true });
      this.#input.resume();
      // A waiting prompt must not keep the process alive on its own: if the turn ends without
      // an answer (child gone, timeout), the CLI still exits. Sockets and TTYs can unref.
      (this.#input as Readable & { unref?: () => void }).unref?.();
    });
  }

  // At the end of input, a last line without its line break (typed, then Ctrl-D twice).
  #rest(): string | undefined {
    if (!this.#ended || this.aborted || this.#buffer === '') return undefined;
    const rest = this.#buffer + this.#decoder.end();
    this.#buffer = '';
    return rest;
  }

  // One complete line from the buffer, if there is one (CR of a CRLF dropped).
  #take(): string | undefined {
    if (this.aborted) return undefined;
    const end = this.#buffer.indexOf('\n');
    if (end < 0) return undefined;
    const line = this.#buffer.slice(0, end).replace(/\r$/, '');
    this.#buffer = this.#buffer.slice(end + 1);
    return line;
  }
}
