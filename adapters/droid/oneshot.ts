import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import type { ChildChannel, LaunchSpec, ResolvedCli, SessionIO } from '../../core/adapter.js';
import type { TurnOutcome, Usage } from '../../core/events/index.js';
import type { DroidConfig } from './config.js';
import { describeDroidLaunch } from './launch.js';
import type { ComposedSettings } from './settings.js';

/**
 * droid's one-shot mode (`droid exec --output-format json`), the fallback when its stream-jsonrpc
 * surface fails: one process per turn, no permission request channel. So that no tool call runs
 * that One Works' policy did not decide, droid gets only its read-only tools (ONESHOT_TOOLS, which
 * the policy always allows) and runs at its own lowest autonomy (no `--auto`: read-only). A call of
 * any other tool is refused by droid itself ("Tool Execute is not permitted in this exec session",
 * droid 0.225.2 and 0.215.0): the command stays unrun.
 */

/** The tools a one-shot droid may use: read-only ones, which the policy allows at every level. */
export const ONESHOT_TOOLS = ['Read', 'LS', 'Grep', 'Glob'] as const;

/** Where the turn's prompt is written in the session HOME (read by `droid exec -f`, so no prompt is in argv). */
export const ONESHOT_PROMPT_FILE = '.one-works/oneshot-prompt.txt';

/** What the one-shot process is started with. */
export interface OneShotLaunchOptions {
  cwd: string;
  home: string;
  settings: ComposedSettings;
  model: string | undefined;
  effort: string | undefined;
  /** The native session to continue (`--session-id`); undefined starts a new one. */
  nativeSessionId: string | undefined;
}

/**
 * `droid exec --output-format json --cwd DIR --only-tools Read,LS,Grep,Glob [-m MODEL] [-r EFFORT]
 * [--session-id ID] -f <HOME>/ONESHOT_PROMPT_FILE`, with the same environment, credentials and
 * managed settings as a stream-jsonrpc session (describeDroidLaunch).
 */
export function describeOneShotLaunch(config: DroidConfig, cli: ResolvedCli, options: OneShotLaunchOptions): LaunchSpec {
  const base = describeDroidLaunch(config, cli, { cwd: options.cwd, home: options.home, settings: options.settings });
  const model = options.model && options.model !== 'inherit' ? options.model : undefined;
  return {
    ...base,
    args: [
      'exec',
      '--output-format',
      'json',
      '--cwd',
      options.cwd,
      '--only-tools',
      ONESHOT_TOOLS.join(','),
      ...(model ? ['-m', model] : []),
      ...(options.effort ? ['-r', options.effort] : []),
      ...(options.nativeSessionId ? ['--session-id', options.nativeSessionId] : []),
      '-f',
      `${options.home}/${ONESHOT_PROMPT_FILE}`,
    ],
  };
}

/** The one line `droid exec --output-format json` prints (droid 0.225.2, 0.215.0); lenient, versions drift. */
export const DroidExecResultSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    result: z.string().default(''),
    session_id: z.string().min(1),
    num_turns: z.number().int().nonnegative().optional(),
    duration_ms: z.number().nonnegative().optional(),
    usage: z
      .looseObject({
        input_tokens: z.number().int().nonnegative().optional(),
        output_tokens: z.number().int().nonnegative().optional(),
        cache_read_input_tokens: z.number().int().nonnegative().optional(),
        cache_creation_input_tokens: z.number().int().nonnegative().optional(),
      })
      .optional(),
  }),
);
export type DroidExecResult = z.infer<typeof DroidExecResultSchema>;

/** How one one-shot process ended. */
export type OneShotEnd =
  | { kind: 'result'; result: DroidExecResult; exitCode: number | null }
  /** It exited without a result line (offline, `--session-id` does this: droid cannot fetch the session). */
  | { kind: 'no-result'; exitCode: number | null; signal: string | null; stderr: string; stopped: boolean };

/**
 * Reads the child's stdout until it exits: the result line, if one came. Lines that are not a
 * result (droid prints none today) are ignored; the caller owns the child and stops it on cancel.
 */
export async function readOneShot(child: ChildChannel): Promise<OneShotEnd> {
  let result: DroidExecResult | undefined;
  child.transport.onmessage = (message) => {
    const parsed = DroidExecResultSchema.safeParse(message);
    if (parsed.success) result = parsed.data;
  };
  await child.transport.start();
  const exit = await child.exited;
  if (result) return { kind: 'result', result, exitCode: exit.exitCode };
  return {
    kind: 'no-result',
    exitCode: exit.exitCode,
    signal: exit.signal,
    stderr: child.stderrTail().trim().slice(-500),
    stopped: exit.stopReason !== undefined,
  };
}

/** The usage a result reports (`reported: false` when it has none). */
export function oneShotUsage(result: DroidExecResult): Usage {
  const usage = result.usage;
  if (!usage || (usage.input_tokens === undefined && usage.output_tokens === undefined)) return { reported: false };
  return {
    reported: true,
    ...(usage.input_tokens === undefined ? {} : { inputTokens: usage.input_tokens }),
    ...(usage.output_tokens === undefined ? {} : { outputTokens: usage.output_tokens }),
    ...(usage.cache_read_input_tokens === undefined ? {} : { cacheReadTokens: usage.cache_read_input_tokens }),
    ...(usage.cache_creation_input_tokens === undefined ? {} : { cacheCreationTokens: usage.cache_creation_input_tokens }),
  };
}

/**
 * Records a one-shot result as the turn's events and returns its outcome: the spanning tool
 * event closes (droid's model calls are counted, its tool calls are not visible), the assistant
 * text becomes `assistant.message`, usage a turn `usage` event, and a failure an `error`.
 */
export function recordOneShotResult(io: Pick<SessionIO, 'emit'>, span: string, result: DroidExecResult): TurnOutcome {
  const failed = result.is_error || result.subtype !== 'success';
  const usage = oneShotUsage(result);
  const calls = result.num_turns === undefined ? '' : ` after ${result.num_turns} model call${result.num_turns === 1 ? '' : 's'}`;
  io.emit({
    type: 'tool.result',
    key: `${span}:result`,
    toolUseId: span,
    isError: failed,
    output: `droid exec ended (${result.subtype})${calls}; its tool calls are not visible in one-shot mode`,
    closedBy: 'agent',
  });
  if (failed) {
    io.emit({ type: 'error', key: `${span}:error`, code: 'oneshot_failed', message: `droid exec failed: ${result.result.slice(0, 2000)}` });
    return { status: 'failed', reason: 'oneshot_failed', text: '', usage };
  }
  if (result.result !== '')
    io.emit({ type: 'assistant.message', key: `${span}:message`, messageId: `${span}:message`, text: result.result });
  if (usage.reported) io.emit({ type: 'usage', key: `${span}:usage`, scope: 'turn', usage });
  return { status: 'completed', reason: 'completed', text: result.result, usage };
}
