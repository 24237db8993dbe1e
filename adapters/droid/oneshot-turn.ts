import type { ChildChannel, SessionIO, SessionSpec, TurnInput, TurnSettings } from '../../core/adapter.js';
import type { TurnOutcome } from '../../core/events/index.js';
import type { DroidConfig } from './config.js';
import { workspaceAllowlist } from './native-permissions.js';
import { describeOneShotLaunch, ONESHOT_PROMPT_FILE, ONESHOT_TOOLS, readOneShot, recordOneShotResult, type OneShotEnd } from './oneshot.js';
import { carriedPrompt, journalEntries, transcriptEntry } from './oneshot-seed.js';
import { composeDroidSettings } from './settings.js';

/** What the one-shot turns share with their DroidSession. */
export interface OneShotHost {
  readonly config: DroidConfig;
  readonly spec: SessionSpec;
  readonly io: SessionIO;
  /** The native session to continue, if known. */
  nativeSessionId(): string | undefined;
  /** Records the native session a one-shot turn ran in. */
  setNativeSessionId(id: string): Promise<void>;
}

/** What a one-shot turn tells droid and the warn event about the mode, in one place. */
export const ONESHOT_NOTE = `one-shot mode (droid exec --output-format json, one process per turn): droid gets only its read-only tools (${ONESHOT_TOOLS.join(', ')}) and refuses every command, edit, MCP tool and sub-agent, because without droid's permission requests One Works' policy cannot decide those calls; live tool detail is unavailable`;

/**
 * The turns of a session in droid's one-shot mode (see oneshot.ts): one `droid exec` per turn in
 * the same sandbox (session HOME, environment allowlist, bwrap, redaction: all through
 * `SessionIO.launch`), `--session-id` when the native session is known. When droid cannot
 * continue it (offline), the turn runs once more as a new native session carrying the
 * conversation as a transcript (oneshot-seed.ts), with a warning.
 */
export class OneShotTurns {
  readonly #host: OneShotHost;
  #child: ChildChannel | undefined;
  /** Set by stop('shutdown'): no `droid exec` starts afterwards, and one starting meanwhile is stopped. */
  #closed = false;
  /** The carried transcript, once droid could not continue a native session (then kept up to date). */
  #carried: string[] | undefined;

  constructor(host: OneShotHost) {
    this.#host = host;
  }

  /** The pid of the running `droid exec`, if any. */
  pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Stops a running `droid exec` (cancel, close); after a `shutdown` none starts again. */
  async stop(reason: 'cancel' | 'shutdown'): Promise<void> {
    if (reason === 'shutdown') this.#closed = true;
    await this.#child?.stop(reason);
  }

  async run(input: TurnInput, settings: TurnSettings): Promise<TurnOutcome> {
    const { io } = this.#host;
    const span = `oneshot:${input.runId}`;
    io.emit({
      type: 'tool.call',
      key: `${span}:call`,
      toolUseId: span,
      name: 'droid exec',
      kind: 'other',
      label: 'one-shot turn: live tool detail is unavailable (read-only tools only)',
      phase: 'running',
    });
    const known = this.#host.nativeSessionId();
    let prompt = this.#carried ? carriedPrompt(this.#carried, input.text) : input.text;
    let end = await this.#exec(prompt, settings, this.#carried ? undefined : known);
    if (end.kind === 'no-result' && !end.stopped && known !== undefined && !this.#carried) {
      io.emit({
        type: 'log',
        key: `${span}:no-continue`,
        level: 'warn',
        message: `droid exec could not continue native session ${known} (${exitText(end)}): droid continues a session in one-shot mode only through Factory's servers; running the turn as a new native session that carries the conversation so far as a transcript`,
      });
      this.#carried = await journalEntries(this.#host.spec.home, this.#host.spec.workspace, known);
      prompt = carriedPrompt(this.#carried, input.text);
      end = await this.#exec(prompt, settings, undefined);
    }
    if (end.kind === 'no-result') {
      const message = `droid exec ended without a result (${exitText(end)})`;
      io.emit({ type: 'tool.result', key: `${span}:result`, toolUseId: span, isError: true, output: message, closedBy: 'runtime' });
      if (!end.stopped) io.emit({ type: 'error', key: `${span}:error`, code: 'process_exited', message });
      return { status: 'failed', reason: end.stopped ? 'cancelled' : 'process_exited', text: '', usage: { reported: false } };
    }
    const outcome = recordOneShotResult(io, span, end.result);
    if (end.result.session_id !== this.#host.nativeSessionId()) await this.#host.setNativeSessionId(end.result.session_id);
    if (this.#carried && outcome.status === 'completed')
      this.#carried.push(transcriptEntry('User', input.text), transcriptEntry('Assistant', outcome.text));
    return outcome;
  }

  async #exec(prompt: string, settings: TurnSettings, nativeSessionId: string | undefined): Promise<OneShotEnd> {
    const { config, spec, io } = this.#host;
    const composed = composeDroidSettings(config, { alsoDenied: workspaceAllowlist(spec.workspace) });
    const launch = describeOneShotLaunch(config, spec.cli, {
      cwd: spec.workspace,
      home: spec.home,
      settings: composed,
      model: settings.model,
      effort: settings.effort,
      nativeSessionId,
    });
    if (this.#closed) return { kind: 'no-result', exitCode: null, signal: null, stderr: '', stopped: true };
    const child = await io.launch(launch, [...composed.files, { path: ONESHOT_PROMPT_FILE, content: prompt }]);
    this.#child = child;
    // A close that came while the child was being launched found nothing to stop.
    if (this.#closed) void child.stop('shutdown');
    try {
      return await readOneShot(child);
    } finally {
      this.#child = undefined;
    }
  }
}

function exitText(end: Extract<OneShotEnd, { kind: 'no-result' }>): string {
  const how = end.signal ? `killed by ${end.signal}` : `exit code ${end.exitCode}`;
  return end.stderr ? `${how}; stderr: ${end.stderr}` : `${how}, no output`;
}
