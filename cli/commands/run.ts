import type { Command } from 'commander';
import { resolve } from 'node:path';
import type { Adapter, Autonomy, LockedVersion, ResolvedCli } from '../../core/adapter.js';
import { adapterBlockSchema } from '../../core/config/schema.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
// The module itself, not core/orchestrator/index.js: the client of `run` never loads the orchestrator.
import { checkPrompt } from '../../core/orchestrator/session-metadata.js';
// The module itself, not core/process/index.js (execa and its ~150 modules): the client spawns nothing.
import { presentationOf } from '../../core/process/env.js';
import { currentView, ViewDeclined, viewCwd, viewEnv } from '../process-view.js';
import { canonicalWorkspace, checkApproved } from '../../core/workspace/index.js';
import { createContext, type CliContext } from '../context.js';
import { beginMatchingOrchestrator } from '../daemon/connect-matching.js';
import { takeEarlySeed } from '../early-seed.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import { limitationNotes, sessionPolicyFromFlags } from '../permissions.js';
import { isFleet } from '../fleet/backend.js';
import { fleetLocation, submitToFleet } from '../fleet/fleet-commands.js';
import { openFleet, type OpenFleet } from '../fleet/open-fleet.js';
import type { Store } from '../../core/store/index.js';
import { withoutSchemaCompilation } from '../schema-compilation.js';
import { openStore } from '../state.js';
import { followTurn, subscribeEarly, type TurnTarget } from './run-follow.js';
import { type EarlyIntent, tellIntent } from './run-intent.js';

export interface TurnFlags {
  workspace?: string;
  model?: string;
  effort?: string;
  autonomy?: string;
  title?: string;
  adapter?: string;
  allow?: string[];
  deny?: string[];
  detach?: boolean;
  requestKey?: string;
  interrupt?: boolean;
  /** false with --no-hint: no `continue:` line (e.g. a demo whose model server is gone afterwards). */
  hint?: boolean;
  worktree?: boolean;
  base?: string;
  branch?: string;
  includeUncommitted?: boolean;
}

// Commander collector of a repeatable option.
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * `run` and `send`: clients of the state directory's orchestrator (started in the background
 * when none runs, see connect-matching.ts). They submit one turn, stream its live view and exit
 * with its outcome; Ctrl-C cancels the turn through the orchestrator. `run --detach` only
 * submits and prints the session id. `send --interrupt` steers: the orchestrator supersedes the
 * session's queued turns and interrupts its live one before this turn runs; the command follows
 * its own run (the interrupted one ends `interrupted`); an agent that can be steered (Codex) takes
 * the message into its live turn instead when the settings are that turn's, and the command
 * follows the live run.
 */
export function registerRunCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('run')
    .description('create a session in a workspace and run one turn through the orchestrator, streaming a live view')
    .argument('<prompt>', 'what to ask the agent')
    .option('-w, --workspace <dir>', 'workspace directory (default: the current directory); must be inside workspaces.approved')
    .option('-m, --model <id>', 'model id (default: adapters.<name>.model)')
    .option('-e, --effort <level>', 'reasoning effort: low | medium | high | xhigh | max')
    .option('-a, --autonomy <level>', 'autonomy: off | low | medium | high')
    .option('-t, --title <title>', 'session title')
    .option('-A, --adapter <name>', 'adapter to use (default: defaults.adapter, else droid)')
    .option('--allow <command>', 'run commands starting with this prefix without asking, in this session (repeatable)', collect, [])
    .option('--deny <command>', 'always deny commands starting with this prefix, in this session (repeatable)', collect, [])
    .option('-d, --detach', 'submit the turn and print the session id at once; the orchestrator runs it in the background')
    .option('--request-key <key>', 'idempotency key: repeating the same run returns the original session')
    .option('--no-hint', 'do not print the `continue:` hint after the result')
    .option(
      '--worktree',
      "run in a new git worktree of the workspace's repository (in the state directory); your checkout is never touched",
    )
    .option('--no-worktree', "run in the workspace itself even when the workspace's approved root (or workspaces.isolation) says worktree")
    .option('--base <ref>', 'the worktree starts from this commit (default: the current HEAD); implies --worktree')
    .option('--branch <name>', "the worktree's new branch (default: ow/<session id>); implies --worktree")
    .option('--include-uncommitted', "copy the checkout's uncommitted changes and untracked files into the worktree; implies --worktree")
    .action((prompt: string, flags: TurnFlags, cmd: Command) =>
      run(async () => {
        withoutSchemaCompilation();
        const globals = cmd.optsWithGlobals<GlobalOptions>();
        // What the prompt and flags alone decide is checked before anything starts: a refused
        // prompt or --allow/--deny entry starts no agent (runTurn checks them again, at no cost).
        checkPrompt(prompt);
        sessionPolicyFromFlags(flags);
        // Told first: the agent starts while this process loads its config and makes its checks.
        const early = tellIntent(globals, viewEnv(), viewCwd(), flags, takeEarlySeed());
        try {
          await early?.ready;
          const ctx = await createContext(globals, viewEnv(), { adapters: 'lazy' });
          return await runTurn(ctx, { kind: 'new', flags, early }, prompt);
        } finally {
          // Unused (the config failed, a fleet): its connection goes, and the agent with it.
          await early?.close();
        }
      }),
    );

  program
    .command('send')
    .description('continue a session with one more turn through the orchestrator (the agent resumes its native session)')
    .argument('<session>', 'session id (see `one-works sessions list`)')
    .argument('<prompt>', 'what to ask the agent')
    .option('-m, --model <id>', 'model id for this turn')
    .option('-e, --effort <level>', 'reasoning effort for this turn')
    .option('-a, --autonomy <level>', 'autonomy for this turn: off | low | medium | high')
    .option(
      '-i, --interrupt',
      "steer: supersede the session's queued turns and interrupt its live one, then run this message on the same native session (an agent that can be steered, e.g. Codex, takes it into its live turn instead)",
    )
    .option(
      '--allow <command>',
      'from this turn on, run commands starting with this prefix without asking, in this session (repeatable)',
      collect,
      [],
    )
    .option(
      '--deny <command>',
      'from this turn on, always deny commands starting with this prefix, in this session (repeatable)',
      collect,
      [],
    )
    .option('--request-key <key>', 'idempotency key: repeating the same send returns (and follows) the original turn')
    .action((sessionId: string, prompt: string, flags: TurnFlags, cmd: Command) =>
      run(async () => {
        withoutSchemaCompilation();
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), viewEnv(), { adapters: 'lazy' });
        return runTurn(ctx, { kind: 'resume', sessionId, flags }, prompt);
      }),
    );
}

type Target = { kind: 'new'; flags: TurnFlags; early?: EarlyIntent | undefined } | { kind: 'resume'; sessionId: string; flags: TurnFlags };

// Flags, workspace and CLI are checked here, before the turn is submitted (the orchestrator is
// reached meanwhile); the turn's settings are checked by the orchestrator at acceptance.
async function runTurn(ctx: CliContext, target: Target, prompt: string): Promise<number> {
  checkPrompt(prompt);
  // Run by the orchestrator for a thin client: a fleet's turn is submitted by the client itself
  // (a declined command is run again by its client: nothing may have been submitted before).
  if (isFleet(ctx) && currentView()) throw new ViewDeclined('the state is a fleet');
  // A fleet (state.backend postgres): the database is the state, a worker runs the turn.
  const fleet = isFleet(ctx) ? await openFleet(ctx) : undefined;
  try {
    return await runTurnOn(ctx, target, prompt, fleet);
  } finally {
    await fleet?.close();
  }
}

async function runTurnOn(ctx: CliContext, target: Target, prompt: string, fleet: OpenFleet | undefined): Promise<number> {
  // The orchestrator is reached (or started, when none runs) while this process makes its own
  // checks: its answer, or its start-up, overlaps them. A failed check gives the connection up
  // (a server started for it exits), and its error comes first.
  const pending = fleet
    ? undefined
    : beginMatchingOrchestrator(ctx, target.kind === 'new' ? target.early?.connectOptions(ctx.stateDir) : undefined);
  // `send` listens to the session as soon as it is connected: its turn goes out right after the checks.
  const subscription = pending && target.kind === 'resume' ? subscribeEarly(pending.client, target.sessionId) : undefined;
  // The state directory is opened meanwhile too (the checks read the session from it first).
  const opening = fleet ? undefined : openStore(ctx, { own: false });
  opening?.catch(() => undefined);
  let local: LocalTurn;
  try {
    // A server to start is started first: the checks' module loads would hold its spawn back.
    await pending?.attempted;
    local = await checkTurn(ctx, target, prompt, fleet?.store ?? opening!, fleet);
  } catch (error) {
    await pending?.abandon();
    throw error;
  }
  const { store, turn, cli, adapterName, workspace, limitations } = local;
  // Rules of this session's policy that the agent can escape are said before the turn starts (the
  // turn's log gets the same warnings as `log` events; the live view then leaves out its copies).
  const sayLimitations = (): boolean => {
    const notes = limitations();
    for (const note of notes) ctx.out.info(`warning: ${note}`);
    return notes.length > 0;
  };
  if (fleet && target.kind === 'new' && target.flags.detach && turn.kind === 'new') {
    sayLimitations();
    return submitToFleet(ctx, fleet.client, turn.request);
  }
  if (fleet) {
    fleet.client.onWaiting = (id) =>
      ctx.out.info(`session ${id}: queued in the fleet, waiting for a worker (\`one-works fleet\` shows the workers and the queue)`);
  }
  const client = fleet?.client ?? (await pending!.client);
  try {
    if (target.kind === 'new' && target.flags.detach && turn.kind === 'new') {
      sayLimitations();
      const handle = await client.createSession(turn.request);
      ctx.out.result(handle, () => handle.sessionId);
      return EXIT.ok;
    }
    const where = cli ? `${adapterName} ${cli.version} (${cli.source})` : `${adapterName} on the fleet ${fleet?.store.where}`;
    return await followTurn(ctx, client, store, turn, `${where} · ${workspace}`, {
      hint: target.flags.hint !== false,
      sayLimitations,
      ...(fleet ? { location: fleetLocation(fleet.store.where) } : {}),
      ...(subscription ? { subscription } : {}),
    });
  } finally {
    await client.close();
  }
}

/** The state `run` and `send` read: the session's record (`send`) and its event log (the live view). */
type StateStore = Pick<Store, 'readEvents' | 'readSession' | 'hasSession'>;

/** What `run` and `send` found out before submitting: the turn, and what the live view says. */
interface LocalTurn {
  store: Pick<Store, 'readEvents'>;
  turn: TurnTarget;
  /** This host's prepared CLI (none for a fleet client: its workers prepare). */
  cli: ResolvedCli | undefined;
  adapterName: string;
  workspace: string;
  /** Works out the warnings about the session's policy (after the request went out: they only inform). */
  limitations: () => string[];
}

// The command's own checks (flags, workspace approval, the CLI prepared) and the turn they make.
// What does not depend on another step starts at once, so that file reads and module loads
// overlap; results are taken (and failures thrown) in the order of the checks.
async function checkTurn(
  ctx: CliContext,
  target: Target,
  prompt: string,
  opening: StateStore | Promise<StateStore>,
  fleet: OpenFleet | undefined,
): Promise<LocalTurn> {
  const early = target.kind === 'new' ? startChecks(ctx, target, fleet, target.flags.adapter ?? ctx.defaultAdapter, undefined) : undefined;
  // Taken first, as before the checks started: a state directory that cannot be opened still fails the command first.
  const store = await opening;
  // In a fleet, a session may still be a queued create (no record before a worker takes it).
  const queued =
    fleet && target.kind === 'resume' && !(await store.hasSession(target.sessionId))
      ? await fleet.client.status(target.sessionId)
      : undefined;
  const existing = target.kind === 'resume' && !queued ? await store.readSession(target.sessionId) : undefined;
  const adapterName = existing?.adapter ?? queued?.adapter ?? target.flags.adapter ?? ctx.defaultAdapter;
  // A worktree session's workspace lies in the state directory; approval applies to its repository.
  const approvalDir = existing?.worktree?.repository ?? existing?.workspace ?? queued?.workspace;
  const checks = early ?? startChecks(ctx, target, fleet, adapterName, approvalDir, existing !== undefined);
  // Only this turn's adapter loads in this process (its schema, limitations and installer). A
  // fleet client may configure no adapter at all: the workers' configs hold them, and check the turn.
  const adapter = await checks.adapter;
  // Flags are validated by the adapter's own schema, so bad values get the same message as in YAML.
  const adapterConfig = adapter
    ? parseTurnFlags(() => adapterBlockSchema(adapterName, adapter.configSchema), ctx.adapterConfig(adapterName), target.flags)
    : undefined;
  // `run --allow/--deny` become the session's policy and `send --allow/--deny` join it; the record keeps it for later turns.
  const policy = sessionPolicyFromFlags(target.flags);
  const approved = await checks.approved;
  const workspace = existing?.worktree ? existing.workspace : approved;

  // Prepared here too, so that a cold managed install shows its progress on this terminal; the
  // orchestrator's own prepare is then a cache hit. A fleet client runs no agent: its workers prepare.
  const cli = fleet
    ? undefined
    : await adapter!.prepare(adapterConfig, {
        services: ctx.services,
        cacheDir: ctx.cacheDir,
        lock: await checks.lock!,
        onProgress: ctx.progress,
        // The command's own (its client's, when the orchestrator runs it for one: see process-view.ts).
        env: ctx.env,
        cwd: ctx.cwd,
        // The binary's version as the last check of this very file found it: no extra CLI start per turn.
        reuseVersionCheck: true,
      });

  // Model and effort are resolved and checked by the orchestrator when it accepts the turn
  // (launch-settings.ts): its refusals reach this command with their codes, its notes as events.

  const settings = {
    ...(target.flags.model ? { model: target.flags.model } : {}),
    ...(target.flags.effort ? { effort: target.flags.effort } : {}),
    ...(target.flags.autonomy ? { autonomy: target.flags.autonomy as Autonomy } : {}),
    // Not part of the orchestrator's identity: this terminal's TERM/COLORTERM/NO_COLOR go with the turn.
    presentation: presentationOf(ctx.env),
  };
  const turn: TurnTarget =
    target.kind === 'new'
      ? {
          kind: 'new',
          request: {
            adapter: adapterName,
            workspace,
            prompt,
            ...settings,
            ...(target.flags.title ? { title: target.flags.title } : {}),
            ...(policy ? { policy } : {}),
            ...(target.flags.requestKey ? { requestKey: target.flags.requestKey } : {}),
            ...worktreeRequest(target.flags),
          },
        }
      : {
          kind: 'resume',
          request: {
            sessionId: target.sessionId,
            prompt,
            ...settings,
            ...(target.flags.interrupt ? { interrupt: true } : {}),
            ...(policy ? { policy } : {}),
            ...(target.flags.requestKey ? { requestKey: target.flags.requestKey } : {}),
          },
        };

  const autonomy = (target.flags.autonomy as Autonomy | undefined) ?? existing?.runs.at(-1)?.autonomy ?? adapterAutonomy(adapterConfig);
  const limitations = (): string[] => (adapter ? limitationNotes(adapter, adapterConfig, [existing?.policy, policy], autonomy) : []);
  return { store, turn, cli, adapterName, workspace, limitations };
}

/** The steps of {@link checkTurn} that only need the adapter's name and the directory to approve, under way. */
interface StartedChecks {
  // biome-ignore lint/suspicious/noExplicitAny: see ADAPTER_LOADERS in context.ts
  adapter: Promise<Adapter<any> | undefined>;
  /** The canonical workspace, approved (in a fleet: the workers' roots decide). */
  approved: Promise<string>;
  /** The lock file's entries of the adapter (none in a fleet). */
  lock: Promise<Map<string, LockedVersion>> | undefined;
}

// Starts loading the adapter, resolving (and approving) the workspace and reading the lock file
// side by side; a failure stays in its promise (marked handled) until checkTurn takes it in turn.
function startChecks(
  ctx: CliContext,
  target: Target,
  fleet: OpenFleet | undefined,
  adapterName: string,
  approvalDir: string | undefined,
  resuming = false,
): StartedChecks {
  const dir = approvalDir ?? (target.flags.workspace ? resolve(ctx.cwd, target.flags.workspace) : ctx.cwd);
  const checks: StartedChecks = {
    adapter: fleet ? localAdapter(ctx, adapterName) : ctx.loadAdapter(adapterName),
    approved: fleet ? canonicalWorkspace(dir) : resolveWorkspace(ctx, dir, resuming),
    lock: fleet ? undefined : ctx.lockEntries(adapterName),
  };
  for (const started of [checks.adapter, checks.approved, checks.lock]) started?.catch(() => undefined);
  return checks;
}

// The adapter when this client's config has it (enabled), else undefined (a fleet client's workers know it).
// biome-ignore lint/suspicious/noExplicitAny: see ADAPTER_LOADERS in context.ts
async function localAdapter(ctx: CliContext, name: string): Promise<Adapter<any> | undefined> {
  try {
    const adapter = await ctx.loadAdapter(name);
    ctx.adapterConfig(name);
    return adapter;
  } catch (error) {
    if (isOneWorksError(error, ERROR_CODES.USAGE)) return undefined;
    throw error;
  }
}

// The adapter block with this turn's -m/-e/-a. Without any, the block is the one the config schema
// parsed already (the orchestrator uses it as it is too): parsing it again would only build the
// block's schema and compile its checks once more, in every `run` and `send`.
function parseTurnFlags(
  schemaOf: () => {
    safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } };
  },
  base: unknown,
  flags: TurnFlags,
): unknown {
  if (!flags.model && !flags.effort && !flags.autonomy) return base;
  const merged = {
    ...(base as Record<string, unknown>),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.effort ? { effort: flags.effort } : {}),
    ...(flags.autonomy ? { autonomy: flags.autonomy } : {}),
  };
  const parsed = schemaOf().safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error!.issues[0]!;
    const key = String(issue.path[0] ?? '');
    const flag = ['model', 'effort', 'autonomy'].includes(key) ? `--${key}` : key;
    throw new OneWorksError('usage', `${flag}: ${issue.message}`);
  }
  return parsed.data;
}

// The adapter block's default autonomy (every adapter block has one today); `low` otherwise.
function adapterAutonomy(adapterConfig: unknown): Autonomy {
  const autonomy = (adapterConfig as { autonomy?: unknown } | undefined)?.autonomy;
  return autonomy === 'off' || autonomy === 'low' || autonomy === 'medium' || autonomy === 'high' ? autonomy : 'low';
}

async function resolveWorkspace(ctx: CliContext, dir: string, resuming: boolean): Promise<string> {
  if (ctx.implicitApproval && !resuming) {
    ctx.out.info(`no one-works.yaml found: approving the current directory alone (${ctx.cwd})`);
  }
  // checkApproved makes the workspace canonical itself (a symlink is named with its real path).
  return checkApproved(dir, ctx.approvedRoots, {
    configKey: 'workspaces.approved',
    ...(ctx.configPath ? { configPath: ctx.configPath } : {}),
  });
}

/**
 * `worktree` of a new session: a request with `--worktree` (or with `--base`, `--branch` or
 * `--include-uncommitted`, which imply it), `false` with `--no-worktree`, and nothing otherwise,
 * so that the orchestrator applies the isolation configured for the workspace's approved root
 * (`workspaces.approved[].isolation`, else `workspaces.isolation`).
 */
export function worktreeRequest(flags: Pick<TurnFlags, 'worktree' | 'base' | 'branch' | 'includeUncommitted'>): {
  worktree?: { base?: string; branch?: string; includeUncommitted?: boolean } | false;
} {
  const implied = [flags.base && '--base', flags.branch && '--branch', flags.includeUncommitted && '--include-uncommitted'].filter(
    (flag): flag is string => typeof flag === 'string',
  );
  if (flags.worktree === false) {
    if (implied.length > 0) throw new OneWorksError('usage', `${implied.join(', ')} only apply with a worktree, not with --no-worktree`);
    return { worktree: false };
  }
  if (flags.worktree !== true && implied.length === 0) return {};
  return {
    worktree: {
      ...(flags.base ? { base: flags.base } : {}),
      ...(flags.branch ? { branch: flags.branch } : {}),
      ...(flags.includeUncommitted ? { includeUncommitted: true } : {}),
    },
  };
}
