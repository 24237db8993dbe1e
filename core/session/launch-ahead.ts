import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { SeedFile } from '../adapter.js';
import { hash53 } from '../config/value-cache.js';
import { DEFERRED_CA_CERTS_VAR } from '../install/extra-ca.js';
import { childSpawnOptions } from '../process/spawn-child.js';
import { randomBytes } from '../lazy-crypto.js';
import { prepareSessionHomeSync } from '../sandbox/session-home.js';
import { writeFileAtomicSync } from '../store/private-fs.js';
import { sessionDir } from '../store/state-layout.js';

/**
 * Launch ahead: the agent of the intent an auto-started server was started with (`serve --auto
 * --intent`), spawned by cli/bin.cjs from the early bundle before the command's bundle loads, and
 * adopted by the orchestrator when its own launch of that intent comes out the same.
 *
 * A server records how it launched its start intent's agent (its *recipe*, `<state>/launch-ahead.json`,
 * 0600): command, arguments, directory, environment and seed files, with the session id, every
 * secret of the launch and every value taken from the server's own environment replaced by where
 * they come from (a place in the config file's text, a variable of the environment), so that the
 * file holds none of them. It is used again only by a server started with the same build, the same
 * config text, the same intent and the same environment: that one spawns the agent at once, with a
 * new session id, before some 100 ms of loading and set-up, and the orchestrator takes that session
 * id for its intent. The orchestrator adopts the child only when the launch it builds itself (seed
 * files, command, arguments, directory, environment) is exactly the one spawned; otherwise the child
 * is stopped, its HOME removed, and the agent spawned as always. A child no session adopts is
 * killed (its process group) and its session directory removed when the server exits, or
 * LAUNCH_AHEAD_WINDOW_MS after its spawn.
 */

/** The recipe's file in the state directory. */
export const LAUNCH_AHEAD_FILE = 'launch-ahead.json';
/** Bumped when the recipe's meaning changes. */
const FORMAT = 1;
/** How long a child launched ahead waits for the orchestrator before it is killed. */
export const LAUNCH_AHEAD_WINDOW_MS = 30_000;

/** A string of the recipe: literal parts, the session id, secret `s`, or the server's variable `env`. */
type Part = string | { id: true } | { s: number } | { env: string };

/** Where a secret of the launch comes from, read again by the next server. */
type SecretSource = { text: [number, number] } | { env: string };

/** What makes a recipe one server's to use: everything its launch was computed from. */
export interface LaunchKey {
  /** The config file and its text, or none. */
  configPath: string | undefined;
  configText: string | undefined;
  /** `--intent` exactly as given. */
  intent: string;
  /** The server's environment. */
  env: NodeJS.ProcessEnv;
}

interface Recipe {
  format: number;
  key: { build: string; configPath: string | null; config: [number, number] | null; intent: string; env: number };
  /** Set when a launch ahead of this key was not what the orchestrator launched: not tried again. */
  mismatch?: true;
  launch?: {
    command: Part[];
    args: Part[][];
    cwd: Part[];
    env: Array<[string, Part[]]>;
    seed: Array<{ path: Part[]; content: Part[]; mode?: number }>;
    secrets: SecretSource[];
  };
}

/** A launch as launchInSandbox makes it: what is spawned, with the seed files written before. */
export interface LaunchFacts {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  seed: readonly SeedFile[];
  secrets: readonly string[];
}

/** A child launched ahead, until the orchestrator takes it or it goes. */
interface Ahead {
  sessionId: string;
  stateDir: string;
  launch: Omit<LaunchFacts, 'secrets'>;
  child: ChildProcess;
  /** Set once it exited, or failed to spawn, before anyone took it. */
  gone: boolean;
  /** claimed: its session id given to the intent; taken: its child adopted (or stopped) by the launch. */
  state: 'waiting' | 'claimed' | 'done';
  timer: NodeJS.Timeout;
}

// Shared by the early bundle that spawns the child and the command's bundle that adopts it: each
// bundle has its own copy of this module.
const REGISTRY = Symbol.for('one-works.launch-ahead');
type Registry = { ahead?: Ahead; outcome?: string; build?: string; launches: Map<string, LaunchFacts> };
function registry(): Registry {
  const holder = globalThis as { [REGISTRY]?: Registry };
  holder[REGISTRY] ??= { launches: new Map() };
  return holder[REGISTRY];
}

/**
 * The environment as the user gave it: a server started with its CA certificates deferred
 * (extra-ca.ts) sets NODE_EXTRA_CA_CERTS back as it loads, after the launch ahead.
 */
function givenEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const given: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string') given[name] = value;
  const deferred = given[DEFERRED_CA_CERTS_VAR];
  if (deferred !== undefined) {
    delete given[DEFERRED_CA_CERTS_VAR];
    given.NODE_EXTRA_CA_CERTS = deferred;
  }
  return given;
}

function envHash(env: NodeJS.ProcessEnv): number {
  return hash53(JSON.stringify(Object.entries(givenEnv(env)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

function keyOf(key: LaunchKey, build: string): Recipe['key'] {
  return {
    build,
    configPath: key.configPath ?? null,
    config: key.configText === undefined ? null : [key.configText.length, hash53(key.configText)],
    intent: key.intent,
    env: envHash(key.env),
  };
}

const sameKey = (a: Recipe['key'], b: Recipe['key']): boolean => JSON.stringify(a) === JSON.stringify(b);

function readRecipe(stateDir: string): Recipe | undefined {
  try {
    const recipe = JSON.parse(readFileSync(`${stateDir}/${LAUNCH_AHEAD_FILE}`, 'utf8')) as Recipe;
    return recipe.format === FORMAT ? recipe : undefined;
  } catch {
    return undefined;
  }
}

/** Notes a launch of `sessionId` (launchInSandbox), for {@link writeLaunchRecipe}. Keeps the last few. */
export function noteLaunch(sessionId: string, launch: LaunchFacts): void {
  const { launches } = registry();
  launches.set(sessionId, launch);
  for (const id of launches.keys()) if (launches.size > 4) launches.delete(id);
}

/**
 * Writes the recipe of the launch of `sessionId` (the start intent's agent) for the next server of
 * `stateDir` started with `key`, unless a launch ahead of that key did not match before, or the
 * launch cannot be written without a secret (a secret found neither in the config text nor in
 * the environment, a binary seed file). Never throws.
 */
export function writeLaunchRecipe(stateDir: string, sessionId: string, key: LaunchKey): boolean {
  try {
    const { launches, build } = registry();
    const launch = launches.get(sessionId);
    if (!launch || build === undefined) return false;
    const wanted = keyOf(key, build);
    const previous = readRecipe(stateDir);
    if (previous?.mismatch && sameKey(previous.key, wanted)) return false;
    const secrets = [...new Set(launch.secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
    const sources: SecretSource[] = [];
    for (const secret of secrets) {
      const at = key.configText?.indexOf(secret) ?? -1;
      const variable = Object.keys(key.env).find((name) => key.env[name] === secret);
      if (at >= 0) sources.push({ text: [at, secret.length] });
      else if (variable !== undefined) sources.push({ env: variable });
      else return false;
    }
    const encode = (text: string, variable?: string): Part[] =>
      variable !== undefined && key.env[variable] === text && !secrets.includes(text)
        ? [{ env: variable }]
        : parts(text, sessionId, secrets);
    const seed: NonNullable<Recipe['launch']>['seed'] = [];
    for (const file of launch.seed) {
      if (typeof file.content !== 'string') return false;
      seed.push({ path: encode(file.path), content: encode(file.content), ...(file.mode === undefined ? {} : { mode: file.mode }) });
    }
    const recipe: Recipe = {
      format: FORMAT,
      key: wanted,
      launch: {
        command: encode(launch.command),
        args: launch.args.map((arg) => encode(arg)),
        cwd: encode(launch.cwd),
        env: Object.entries(launch.env).map(([name, value]) => [name, encode(value, name)]),
        seed,
        secrets: sources,
      },
    };
    const text = JSON.stringify(recipe);
    // By construction none is there; checked all the same, as the file's promise is to hold none.
    if (secrets.some((secret) => text.includes(secret))) return false;
    writeFileAtomicSync(`${stateDir}/${LAUNCH_AHEAD_FILE}`, text);
    return true;
  } catch {
    return false;
  }
}

// `text` split at the session id and at every secret (longest first).
function parts(text: string, sessionId: string, secrets: readonly string[]): Part[] {
  let out: Part[] = [text];
  const splitAt = (needle: string, part: Part): void => {
    out = out.flatMap((piece) => {
      if (typeof piece !== 'string' || !piece.includes(needle)) return [piece];
      return piece.split(needle).flatMap((literal, index) => (index === 0 ? [literal] : [part, literal]));
    });
  };
  for (const [index, secret] of secrets.entries()) splitAt(secret, { s: index });
  splitAt(sessionId, { id: true });
  return out.filter((piece) => piece !== '');
}

/**
 * Spawns the agent of `key`'s intent from the recipe in `stateDir`, when there is one for exactly
 * that key and `build` (cli/bin.cjs, before the command's bundle loads, in a server started with
 * an intent); the build is kept for the recipe this server writes. Never throws; spawns nothing
 * when anything is off.
 */
export function launchAhead(stateDir: string, facts: Omit<LaunchKey, 'env'>, build: string, env: NodeJS.ProcessEnv): void {
  const key: LaunchKey = { ...facts, env: givenEnv(env) };
  try {
    registry().build = build;
    const recipe = readRecipe(stateDir);
    if (!recipe?.launch || recipe.mismatch || !sameKey(recipe.key, keyOf(key, build))) return;
    const sessionId = freshSessionId(stateDir);
    const secrets = recipe.launch.secrets.map((source) =>
      'text' in source ? key.configText!.slice(source.text[0], source.text[0] + source.text[1]) : key.env[source.env],
    );
    if (secrets.some((secret) => secret === undefined || secret === '')) return;
    const decode = (pieces: Part[]): string => {
      let text = '';
      for (const piece of pieces) {
        if (typeof piece === 'string') text += piece;
        else if ('id' in piece) text += sessionId;
        else if ('s' in piece) text += secrets[piece.s]!;
        else {
          const value = key.env[piece.env];
          if (value === undefined) throw new Error(`${piece.env} is not set`);
          text += value;
        }
      }
      return text;
    };
    const launch = {
      command: decode(recipe.launch.command),
      args: recipe.launch.args.map(decode),
      cwd: decode(recipe.launch.cwd),
      env: Object.fromEntries(recipe.launch.env.map(([name, value]) => [name, decode(value)])),
      seed: recipe.launch.seed.map((file) => ({
        path: decode(file.path),
        content: decode(file.content),
        ...(file.mode === undefined ? {} : { mode: file.mode }),
      })),
    };
    if (!existsSync(launch.command) || !existsSync(launch.cwd)) return;
    try {
      prepareSessionHomeSync(stateDir, sessionId, launch.seed);
    } catch {
      rmSync(sessionDir(stateDir, sessionId), { recursive: true, force: true });
      return;
    }
    const child = spawn(launch.command, launch.args, childSpawnOptions(launch.cwd, launch.env));
    const ahead: Ahead = {
      sessionId,
      stateDir,
      launch,
      child,
      gone: false,
      state: 'waiting',
      timer: setTimeout(() => discardAhead(ahead), LAUNCH_AHEAD_WINDOW_MS),
    };
    ahead.timer.unref();
    // Not what keeps this process alive: a server that leaves before it serves (another owns the
    // state directory) exits, and its exit kills the child. Held again once adopted.
    holdProcess(child, false);
    child.once('error', () => {
      ahead.gone = true;
    });
    child.once('exit', () => {
      ahead.gone = true;
    });
    registry().ahead = ahead;
    // Whatever ends this process first ends the child no session took, and its directory.
    process.once('exit', () => discardAhead(ahead));
  } catch {
    // Nothing launched: the orchestrator launches the agent as always.
  }
}

// A session id no session directory has: `s-` and 10 hex digits.
function freshSessionId(stateDir: string): string {
  for (;;) {
    const id = `s-${randomBytes(5).toString('hex')}`;
    if (!existsSync(sessionDir(stateDir, id))) return id;
  }
}

// Kills a child no launch took (its process group) and removes its session directory. Synchronous: also runs on exit.
function discardAhead(ahead: Ahead): void {
  if (ahead.state === 'done') return;
  ahead.state = 'done';
  clearTimeout(ahead.timer);
  killGroup(ahead.child);
  removeSessionDir(ahead);
}

function removeSessionDir(ahead: Ahead): void {
  try {
    rmSync(sessionDir(ahead.stateDir, ahead.sessionId), { recursive: true, force: true });
  } catch {
    // Left for the state's housekeeping.
  }
}

// Refs or unrefs the child and its pipes, as handles of this process's event loop.
function holdProcess(child: ChildProcess, hold: boolean): void {
  if (hold) child.ref();
  else child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr] as Array<{ ref?(): void; unref?(): void } | null>) {
    if (hold) stream?.ref?.();
    else stream?.unref?.();
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/**
 * The session id of the agent launched ahead, for the intent the server was started with (the
 * orchestrator's first intent): given once; undefined when none was launched or it is gone.
 */
export function claimLaunchedAhead(): string | undefined {
  const ahead = registry().ahead;
  if (ahead?.state !== 'waiting' || ahead.gone) return undefined;
  ahead.state = 'claimed';
  return ahead.sessionId;
}

/** What {@link adoptLaunchedAhead} found for a launch: the child to adopt, or why not (`gone` settles once it has exited). */
export type Adoption = { child: ChildProcess } | { mismatch: string; gone: Promise<void> } | undefined;

/**
 * The child launched ahead for `sessionId` when `launch` (what launchInSandbox is about to spawn)
 * is exactly the one it was spawned with. Otherwise, when there is one for that session, it is
 * killed, its session directory removed once it has exited (`gone`), the recipe marked so that the
 * next server does not try it again, and why is returned. Undefined when no child was launched
 * ahead for that session.
 */
export function adoptLaunchedAhead(sessionId: string, launch: Omit<LaunchFacts, 'secrets'>): Adoption {
  const ahead = registry().ahead;
  if (!ahead || ahead.sessionId !== sessionId || ahead.state === 'done') return undefined;
  const why = ahead.gone ? 'it exited before the orchestrator took it' : difference(ahead.launch, launch);
  if (why === undefined) {
    ahead.state = 'done';
    clearTimeout(ahead.timer);
    registry().outcome = `session ${sessionId} adopted the agent launched ahead (spawned before the orchestrator loaded)`;
    holdProcess(ahead.child, true);
    return { child: ahead.child };
  }
  registry().outcome = `the agent launched ahead for session ${sessionId} was not adopted (${why}): stopped, and spawned again`;
  if (!ahead.gone) markMismatch(ahead.stateDir);
  const exited = ahead.gone || ahead.child.exitCode !== null || ahead.child.signalCode !== null;
  const gone = exited ? Promise.resolve() : new Promise<void>((resolve) => ahead.child.once('exit', () => resolve()));
  discardAhead(ahead);
  // Removed again once it has exited: a file it was writing as it was killed goes too.
  return { mismatch: why, gone: gone.then(() => removeSessionDir(ahead)) };
}

/** Kills the agent launched ahead when no intent claimed its session id (the server's start intent got no agent). */
export function dropUnclaimedAhead(): void {
  const ahead = registry().ahead;
  if (ahead?.state === 'waiting') discardAhead(ahead);
}

/**
 * What became of the agent launched ahead in this process, for the server's log: adopted, not
 * adopted and why, launched but not (yet) taken, or undefined when none was launched.
 */
export function launchedAheadOutcome(): string | undefined {
  const { ahead, outcome } = registry();
  if (outcome !== undefined || !ahead) return outcome;
  return `an agent was launched ahead for session ${ahead.sessionId}, and no launch took it`;
}

function difference(a: Omit<LaunchFacts, 'secrets'>, b: Omit<LaunchFacts, 'secrets'>): string | undefined {
  if (a.command !== b.command) return 'another command';
  if (JSON.stringify(a.args) !== JSON.stringify(b.args)) return 'other arguments';
  if (a.cwd !== b.cwd) return 'another directory';
  const sorted = (env: Readonly<Record<string, string>>): string =>
    JSON.stringify(Object.entries(env).sort(([x], [y]) => (x < y ? -1 : 1)));
  if (sorted(a.env) !== sorted(b.env)) return 'another environment';
  const files = (seed: readonly SeedFile[]): string =>
    JSON.stringify(seed.map((file) => [file.path, typeof file.content === 'string' ? file.content : [...file.content], file.mode ?? null]));
  if (files(a.seed) !== files(b.seed)) return 'other seed files';
  return undefined;
}

function markMismatch(stateDir: string): void {
  try {
    const recipe = readRecipe(stateDir);
    if (recipe)
      writeFileAtomicSync(`${stateDir}/${LAUNCH_AHEAD_FILE}`, JSON.stringify({ format: FORMAT, key: recipe.key, mismatch: true }));
  } catch {
    // The next server tries it again, and finds the same.
  }
}
