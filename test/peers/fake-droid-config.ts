/**
 * Faults the fake droid can inject, chosen with `FAKE_DROID_FAULT` (comma-separated):
 *
 * - `wrong-protocol`: frames announce protocol `FAKE_DROID_PROTOCOL` or, if unset, 0.0.1.
 * - `wrong-api`: frames announce `factoryApiVersion` `FAKE_DROID_API` or, if unset, 2.0.0.
 * - `missing-version`: frames carry no `factoryProtocolVersion`.
 * - `malformed-init`: the initialize_session result lacks sessionId, session, settings, availableModels.
 * - `malformed-frame`: a non-JSON line after the first text delta of a turn; the turn then completes.
 * - `oversized-frame`: a 20 MiB (valid JSON) line after the first text delta; the turn then completes.
 * - `die-mid-turn`: after a `tool_call` (sent twice, like the real CLI) the process exits 1.
 * - `silence`: add_user_message gets `{}`, then nothing is ever written again (stdin EOF ignored).
 * - `stdout-closed-before-exit`: mid-turn stdout is closed; the process lingers `FAKE_DROID_LINGER_MS`
 *   (default 3000) and exits 0.
 * - `idle-before-message`: `droid_working_state_changed idle` before the assistant create_message;
 *   the turn then completes normally.
 * - `unrelated-turn-id`: `agent_turn_completed` for another turn id, then nothing more for this turn.
 * - `double-response`: every response is sent twice with the same id.
 * - `ignore-sigterm`: SIGTERM and stdin EOF are ignored; only SIGKILL ends the process.
 * - `die-before-reply`: after the user's create_message and the working states, before any
 *   assistant text or tool call, the process exits 1 (nothing of the turn was observed).
 * - `die-before-reply-once`: like `die-before-reply`, in the first process of this HOME only (a
 *   marker file under `$HOME/.fake-droid` remembers it); later processes play the turn normally.
 * - `oneshot-no-resume`: one-shot `exec --output-format json --session-id <id>` exits 1 with no
 *   output, as the real droid does offline ("Failed to fetch session").
 * - `oneshot-fails`: a one-shot exec prints a failure result and exits 1.
 * - `die-at-start`: the stream-jsonrpc process exits 1 at once, before reading anything (one-shot
 *   runs are not affected).
 * - `oneshot-hang`: a one-shot exec records its run and then never ends by itself (SIGTERM ends it).
 */
export const FAKE_DROID_FAULTS = [
  'wrong-protocol',
  'wrong-api',
  'missing-version',
  'malformed-init',
  'malformed-frame',
  'oversized-frame',
  'die-mid-turn',
  'silence',
  'stdout-closed-before-exit',
  'idle-before-message',
  'unrelated-turn-id',
  'double-response',
  'ignore-sigterm',
  /** droid.list_tools fails as an unsimulated method (by default the fake lists no tools). */
  'list-tools-fails',
  /** droid.update_session_settings with a modelId is refused, as an organisation policy refuses a model (-32600). */
  'model-blocked',
  'die-before-reply',
  'die-before-reply-once',
  'oneshot-no-resume',
  'oneshot-fails',
  'die-at-start',
  'oneshot-hang',
] as const;

export type FakeDroidFault = (typeof FAKE_DROID_FAULTS)[number];

/** The fake droid's behaviour, read from its environment. */
export interface FakeDroidConfig {
  /** `--version` output; `FAKE_DROID_VERSION`, default 0.225.2. */
  version: string;
  /** Announced `factoryProtocolVersion`, or undefined to omit it; `FAKE_DROID_PROTOCOL`, default 1.220.0. */
  protocol: string | undefined;
  /** Announced `factoryApiVersion`; `FAKE_DROID_API`, default 1.0.0. */
  api: string;
  faults: ReadonlySet<FakeDroidFault>;
  /** The assistant's reply text; `FAKE_DROID_REPLY`, default "Hello from the fake droid." */
  reply: string;
  /** Pause between turn notifications; `FAKE_DROID_STEP_MS`, default 1. */
  stepMs: number;
  /** How long `stdout-closed-before-exit` lingers; `FAKE_DROID_LINGER_MS`, default 3000. */
  lingerMs: number;
  /** If set, every stdin line is appended to this file (`FAKE_DROID_RECORD`). */
  recordPath: string | undefined;
}

// Parses a non-negative integer variable, falling back to `fallback` when unset.
function readMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`);
  return value;
}

/** Reads the configuration; throws with a readable message on an unknown fault or bad number. */
export function readFakeDroidConfig(env: NodeJS.ProcessEnv): FakeDroidConfig {
  const names = (env.FAKE_DROID_FAULT ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const faults = new Set<FakeDroidFault>();
  for (const name of names) {
    if (!(FAKE_DROID_FAULTS as readonly string[]).includes(name)) {
      throw new Error(`unknown FAKE_DROID_FAULT "${name}"; known: ${FAKE_DROID_FAULTS.join(', ')}`);
    }
    faults.add(name as FakeDroidFault);
  }
  let protocol: string | undefined = env.FAKE_DROID_PROTOCOL ?? (faults.has('wrong-protocol') ? '0.0.1' : '1.220.0');
  if (faults.has('missing-version')) protocol = undefined;
  return {
    version: env.FAKE_DROID_VERSION ?? '0.225.2',
    protocol,
    api: env.FAKE_DROID_API ?? (faults.has('wrong-api') ? '2.0.0' : '1.0.0'),
    faults,
    reply: env.FAKE_DROID_REPLY ?? 'Hello from the fake droid.',
    stepMs: readMs(env, 'FAKE_DROID_STEP_MS', 1),
    lingerMs: readMs(env, 'FAKE_DROID_LINGER_MS', 3000),
    recordPath: env.FAKE_DROID_RECORD === '' ? undefined : env.FAKE_DROID_RECORD,
  };
}
