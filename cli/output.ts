import { Redactor } from '../core/redact.js';
import { PROCESS_STDERR, PROCESS_STDOUT, type TextSink } from './stdio.js';
import { jsonTerminalSafe, terminalSafe } from './terminal-text.js';

/**
 * The CLI process's own redactor: every secret of the loaded configuration is registered here
 * (cli/context.ts), and everything printed — outputs and error messages alike — passes it.
 */
export const processRedactor = new Redactor();

/**
 * Everything the CLI prints goes through here, so that every line passes the redactors of the
 * sessions it concerns and no agent text drives the terminal (human text through
 * `terminalSafe`: control and escape sequences shown visibly, newlines and tabs kept; JSON
 * through `jsonTerminalSafe`, so it stays exact JSON). Human text goes to stdout (or stderr for
 * diagnostics); `--json` mode prints one JSON value a line on stdout and nothing else there.
 */
export class Output {
  readonly json: boolean;
  readonly #redactors = new Set<Redactor>();
  readonly #out: TextSink;
  readonly #err: TextSink;

  constructor(options: { json: boolean; stdout?: TextSink; stderr?: TextSink }) {
    this.json = options.json;
    this.#out = options.stdout ?? PROCESS_STDOUT;
    this.#err = options.stderr ?? PROCESS_STDERR;
    this.#redactors.add(processRedactor);
  }

  /** Every later line is also redacted with this redactor. */
  addRedactor(redactor: Redactor): void {
    this.#redactors.add(redactor);
  }

  redact(text: string): string {
    let out = text;
    for (const r of this.#redactors) out = r.redact(out);
    return out;
  }

  /** Text to stdout (no newline added); may be a piece of a stream. */
  write(text: string): void {
    this.#out.write(terminalSafe(this.redact(text)));
  }

  /** A line for people on stdout (suppressed in --json mode). */
  line(text = ''): void {
    if (!this.json) this.#out.write(`${terminalSafe(this.redact(text))}\n`);
  }

  /** A diagnostic line on stderr (kept in --json mode: stdout stays machine-readable). */
  info(text: string): void {
    this.#err.write(`${terminalSafe(this.redact(text))}\n`);
  }

  /** One JSON value on stdout (only in --json mode). */
  record(value: unknown): void {
    if (this.json) this.#out.write(`${jsonTerminalSafe(this.redact(JSON.stringify(value)))}\n`);
  }

  /** Prints `value` as JSON in --json mode, or the human text otherwise. */
  result(value: unknown, human: () => string): void {
    if (this.json) this.record(value);
    else this.line(human());
  }

  get isTTY(): boolean {
    return this.#out.isTTY === true;
  }

  get stderrIsTTY(): boolean {
    return this.#err.isTTY === true;
  }
}
