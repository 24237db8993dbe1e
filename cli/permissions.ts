import type { Readable } from 'node:stream';
import { viewStdio } from './process-view.js';
import type { Adapter, Autonomy, PermissionAsk, PermissionDecision } from '../core/adapter.js';
import { OneWorksError } from '../core/errors.js';
import {
  PermissionPolicySchema,
  createPermissionDecider,
  declineEscalator,
  describeLimitation,
  limitationsInEffect,
  mergePolicies,
  type DecisionRecord,
  type Escalator,
  type PermissionPolicy,
  type PermissionPolicyInput,
} from '../core/permissions/index.js';
import type { SessionRecord } from '../core/store/index.js';
import type { CliContext } from './context.js';
import type { Output } from './output.js';
import type { TextSink } from './stdio.js';
import { createTtyEscalator } from './tty-escalator.js';

/** One decision of a CLI session, as `onDecision` sees it. */
export interface SessionDecision extends DecisionRecord {
  /** The session record at the time of the ask. */
  session: SessionRecord;
  /**
   * Set (redacted, in words a person can act on) when the policy escalated the ask and it was
   * declined without a person deciding: the session should be marked `needs_attention` with it.
   */
  attention?: string;
}

export interface DeciderOptions {
  /** This process's additions to the policy (`run --allow/--deny`); see `sessionPolicyFromFlags`. */
  sessionPolicy?: PermissionPolicyInput;
  /** Called once per decision, before the agent gets the answer; must not throw. */
  onDecision?: (decision: SessionDecision) => void;
  /**
   * The turn's abort signal: aborting declines an open terminal prompt (and queued ones) and
   * releases stdin; decisions made after it are not reported for attention.
   */
  signal?: AbortSignal;
  /** Replaces the escalator chosen from the terminal (for tests and non-CLI callers). */
  escalator?: Escalator;
  /**
   * True for a decision that nobody needs to attend to although the person was not asked (e.g.
   * the orchestrator's client reported its prompt abandoned because the person interrupted).
   */
  quiet?: (record: DecisionRecord) => boolean;
  /** The terminal; default the command's stdin and stderr (cli/process-view.ts viewStdio). */
  terminal?: { input: Readable & { isTTY?: boolean }; output: TextSink };
}

/**
 * The permission decider of CLI sessions. The policy is the adapter's YAML `policy`, plus the
 * session record's `policy` (stored by `run`, reused by `send`), plus `options.sessionPolicy`.
 * Escalations go to the person at the terminal when stdin and stderr are TTYs and the output
 * is not `--json` (see `createTtyEscalator`); otherwise they are declined and reported as
 * decided by policy. The autonomy is that of the session's live run. The returned function
 * never rejects.
 */
export function createDecider(
  _ctx: CliContext,
  adapterConfig: unknown,
  out: Output,
  options: DeciderOptions = {},
): (ask: PermissionAsk, session: SessionRecord) => Promise<PermissionDecision> {
  const yamlPolicy = (adapterConfig as { policy?: PermissionPolicyInput } | undefined)?.policy;
  const terminal = options.terminal ?? commandTerminal();
  const escalator =
    options.escalator ??
    (isInteractive(out, terminal)
      ? createTtyEscalator({
          input: terminal.input,
          output: terminal.output,
          redact: (text) => out.redact(text),
          ...(options.signal ? { signal: options.signal } : {}),
        })
      : declineEscalator);
  const deciders = new Map<string, (ask: PermissionAsk) => Promise<PermissionDecision>>();
  // Attention notes by request id, attached to the decision they belong to (asks may overlap).
  const notes = new Map<string, string>();
  // The record of the latest ask: its `sessionAllows` (recorded by any process) apply to every decider.
  let latest: SessionRecord | undefined;
  return async (ask, session) => {
    latest = session;
    const autonomy: Autonomy = session.runs.at(-1)?.autonomy ?? session.pending?.autonomy ?? 'low';
    const key = `${session.id}:${autonomy}`;
    let decide = deciders.get(key);
    if (!decide) {
      decide = createPermissionDecider({
        policy: mergePolicies(yamlPolicy, session.policy, options.sessionPolicy),
        autonomy,
        workspace: session.workspace,
        escalator,
        remembered: () => latest?.sessionAllows ?? [],
        onDecision: (record) => {
          // A prompt abandoned because the person interrupted the turn needs nobody's attention.
          const quiet = options.signal?.aborted === true || options.quiet?.(record) === true;
          const attention = quiet ? undefined : attentionFor(record, session.id, out);
          if (attention) notes.set(record.ask.requestId, attention);
          options.onDecision?.({ ...record, session, ...(attention ? { attention } : {}) });
        },
      });
      deciders.set(key, decide);
    }
    const decision = await decide(ask);
    const attention = notes.get(ask.requestId);
    notes.delete(ask.requestId);
    return attention ? { ...decision, attention } : decision;
  };
}

/**
 * The warnings of a turn: one line per limitation `adapter` declares that the session's policy
 * (the YAML `policy` of `adapterConfig`, plus the session's own additions) depends on at
 * `autonomy`. Empty when the adapter declares none or none matters.
 */
export function limitationNotes(
  adapter: Pick<Adapter<unknown>, 'name' | 'limitations'>,
  adapterConfig: unknown,
  sessionPolicies: ReadonlyArray<PermissionPolicyInput | undefined>,
  autonomy: Autonomy,
): string[] {
  const yamlPolicy = (adapterConfig as { policy?: PermissionPolicyInput } | undefined)?.policy;
  const policy = mergePolicies(yamlPolicy, ...sessionPolicies);
  return limitationsInEffect(adapter.limitations ?? [], policy, autonomy).map((entry) => describeLimitation(adapter.name, entry));
}

/** True when a person can be asked: stdin and stderr are TTYs and the output is not `--json`. */
export function isInteractive(out: Output, terminal: { input: { isTTY?: boolean }; output: { isTTY?: boolean } }): boolean {
  // stderr first: this process's stdin is made only when stderr is a terminal (see commandTerminal).
  return !out.json && terminal.output.isTTY === true && terminal.input.isTTY === true;
}

/**
 * The terminal of the command being run: its stdin and stderr. This process's stdin is made when
 * first read (a `run` whose stderr is no terminal never makes it: cli/stdio.ts).
 */
export function commandTerminal(): { readonly input: Readable & { isTTY?: boolean }; readonly output: TextSink } {
  const stdio = viewStdio();
  return {
    get input() {
      return stdio.stdin;
    },
    output: stdio.stderr,
  };
}

/**
 * The session policy of `run --allow CMD --deny CMD` (repeatable), validated like the YAML
 * policy; undefined when no flag was given. Throws OneWorksError('usage') naming the flag, e.g.
 * for `--allow "a && b"` (allow entries match one command at a time).
 */
export function sessionPolicyFromFlags(flags: { allow?: readonly string[]; deny?: readonly string[] }): PermissionPolicy | undefined {
  const allow = [...(flags.allow ?? [])];
  const deny = [...(flags.deny ?? [])];
  if (allow.length === 0 && deny.length === 0) return undefined;
  const parsed = PermissionPolicySchema.safeParse({ allow, deny });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const [list, index] = issue.path as [string, number];
  const value = list === 'allow' ? allow[index] : deny[index];
  throw new OneWorksError('usage', `--${list} ${JSON.stringify(value)}: ${issue.message}`);
}

export { mergePolicies } from '../core/permissions/index.js';

// An escalation that nobody answered: declined by policy (no TTY, a failed prompt, an abandoned one).
function attentionFor({ ask, decision }: DecisionRecord, sessionId: string, out: Output): string | undefined {
  if (!decision.escalated || decision.by !== 'policy' || decision.decision !== 'deny') return undefined;
  const why = decision.reason ?? 'no person was asked';
  if (ask.kind === 'question') {
    const first = ask.questions?.[0]?.question;
    const what = first !== undefined ? `the agent's question "${first}"` : "the agent's question";
    return out.redact(
      `${what} was declined (${why}); answer it in the next turn (one-works send ${sessionId} "…"); next time answer while it waits: from a terminal, with one-works asks / one-works answer, or over MCP (answer_ask)`,
    );
  }
  const tools = ask.tools.map((t) => t.label).join(', ');
  return out.redact(
    `permission for ${tools} was declined (${why}); next time answer while it waits (run from a terminal, or one-works asks ${sessionId} then one-works answer ASK allow|allow-session|deny, or MCP answer_ask; orchestrator.askTimeoutMs sets how long it waits), or allow it with --allow CMD or adapters.<name>.policy.allow`,
  );
}
