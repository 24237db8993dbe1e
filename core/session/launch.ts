import type { ChildChannel, LaunchSpec, SandboxCommand, SeedFile } from '../adapter.js';
import type { ChildHandle } from '../process/child-supervisor.js';
import { buildChildEnv } from '../process/env.js';
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import { OneWorksError } from '../errors.js';
import { bwrapAvailable, wrapWithBwrap } from '../process/bwrap.js';
import { runCommand, type RunCommandResult } from '../process/run-command.js';
import { adoptChild, spawnChild } from '../process/spawn-child.js';
import { sweepProcessesByEnvSync, trackSweep } from '../process/sweep.js';
import type { Redactor } from '../redact.js';
import { prepareSessionHome, sessionHome } from '../sandbox/index.js';
import { adoptLaunchedAhead, noteLaunch } from './launch-ahead.js';
import { createStreamTransport } from '../transport/index.js';

export interface LaunchContext {
  stateDir: string;
  sessionId: string;
  redactor: Redactor;
  parentEnv: NodeJS.ProcessEnv;
  drainFallbackMs?: number;
  stopGraceMs?: number;
  /** `bwrap`: run the launch under bubblewrap (read-only root; workspace and HOME writable). */
  sandbox?: 'none' | 'bwrap';
  /** With `bwrap`: further paths the agent may write (a worktree session's worktree and parts of `.git`). */
  writable?: readonly string[];
  /** With `bwrap`: further paths bound read-only (a worktree session's repository `.git`). */
  readOnly?: readonly string[];
  /** With `bwrap`: paths bound read-only again over the writable ones (other branches' refs beside the session's own). */
  readOnlyOver?: readonly string[];
}

/**
 * Starts an adapter's launch description inside the session sandbox: seeds the session HOME,
 * registers every secret with the redactor BEFORE the child exists, builds the allowlisted
 * environment, spawns the child in its own process group and wraps its stdio in a transport.
 * When the child has exited, every process still carrying its session HOME is killed.
 */
export async function launchInSandbox(ctx: LaunchContext, launch: LaunchSpec, seed: SeedFile[]): Promise<ChildChannel> {
  for (const secret of launch.secrets) ctx.redactor.register(secret);
  const home = sessionHome(ctx.stateDir, ctx.sessionId);
  const env = buildChildEnv({ parentEnv: ctx.parentEnv, home, additions: launch.env, credentials: {} });
  const supervision = {
    redactor: ctx.redactor,
    ...(ctx.drainFallbackMs === undefined ? {} : { drainFallbackMs: ctx.drainFallbackMs }),
  };
  let child: ChildHandle;
  if (ctx.sandbox === 'bwrap') {
    // Never launched ahead (no recipe is kept for it: launch-ahead.ts).
    await prepareSessionHome(ctx.stateDir, ctx.sessionId, seed);
    const argv = await confine(launch, home, env, {
      readOnly: ctx.readOnly ?? [],
      writable: ctx.writable ?? [],
      readOnlyOver: ctx.readOnlyOver ?? [],
    });
    child = await spawnChild({ command: argv.command, args: argv.args, cwd: launch.cwd, env, ...supervision });
  } else {
    const facts = { command: launch.command, args: launch.args, cwd: launch.cwd, env, seed };
    // The agent a server spawned before it loaded (its start intent's, launch-ahead.ts): taken when
    // it is exactly this launch; otherwise stopped, and its session directory gone, before this one.
    const ahead = adoptLaunchedAhead(ctx.sessionId, facts);
    if (ahead && 'mismatch' in ahead) await ahead.gone;
    const adopted = ahead && 'child' in ahead ? ahead.child : undefined;
    // An adopted child runs in the HOME its launch prepared with these very seed files, which it
    // may have changed since: not written again under it.
    if (!adopted) await prepareSessionHome(ctx.stateDir, ctx.sessionId, seed);
    noteLaunch(ctx.sessionId, { ...facts, secrets: launch.secrets });
    child = adopted
      ? adoptChild(adopted, supervision)
      : await spawnChild({ command: launch.command, args: launch.args, cwd: launch.cwd, env, ...supervision });
  }
  const transport = createStreamTransport(
    child.stdout,
    child.stdin,
    launch.maxLineBytes === undefined ? {} : { maxLineBytes: launch.maxLineBytes },
  );
  // Everything the agent starts inherits HOME=<session home>; when the agent is gone, so are they.
  const untrack = trackSweep('HOME', home);
  const exited = child.exited.then((exit) => {
    sweepProcessesByEnvSync('HOME', home);
    untrack();
    return exit;
  });
  return {
    transport,
    pid: child.pid,
    exited,
    stderrTail: () => child.stderrTail(),
    stop: async (reason) => {
      const exit = await child.stop(reason, ctx.stopGraceMs === undefined ? {} : { graceMs: ctx.stopGraceMs });
      await exited;
      return exit;
    },
  };
}

/**
 * Runs one short command inside the session sandbox: the same allowlisted environment and
 * session HOME as the agent, bubblewrap when `ctx.sandbox` says so, its own process group
 * (killed on timeout, abort, and after it exits). Output is redacted with the session's
 * redactor. Resolves for any exit; rejects with `spawn_failed` when it cannot start.
 */
export async function execInSandbox(ctx: LaunchContext, command: SandboxCommand): Promise<RunCommandResult> {
  const home = await prepareSessionHome(ctx.stateDir, ctx.sessionId, []);
  const env = buildChildEnv({ parentEnv: ctx.parentEnv, home, credentials: {} });
  const launch: LaunchSpec = { command: command.command, args: [...command.args], cwd: command.cwd, env: {}, secrets: [] };
  const argv =
    ctx.sandbox === 'bwrap'
      ? await confine(launch, home, env, {
          readOnly: ctx.readOnly ?? [],
          writable: ctx.writable ?? [],
          readOnlyOver: ctx.readOnlyOver ?? [],
        })
      : launch;
  const result = await runCommand(argv.command, argv.args, {
    cwd: command.cwd,
    env,
    timeoutMs: command.timeoutMs,
    maxOutputBytes: command.maxOutputBytes,
    ...(command.signal ? { signal: command.signal } : {}),
  });
  return { ...result, stdout: ctx.redactor.redact(result.stdout), stderr: ctx.redactor.redact(result.stderr) };
}

// Wraps the launch in bubblewrap, refusing clearly when it cannot run here.
async function confine(
  launch: LaunchSpec,
  home: string,
  env: Record<string, string>,
  extra: { readOnly: readonly string[]; writable: readonly string[]; readOnlyOver: readonly string[] },
): Promise<{ command: string; args: string[] }> {
  if (!(await bwrapAvailable({ env: { PATH: env.PATH ?? '' } }))) {
    throw new OneWorksError(
      'spawn_failed',
      'sandbox: bwrap needs bubblewrap, installed and able to create namespaces here (e.g. `apt-get install bubblewrap`); or set sandbox: none',
    );
  }
  // The private /tmp would hide a binary installed under /tmp (a cache or a checkout there).
  // Its real path: bwrap cannot create a mount point through a symlink in the read-only root.
  // The same for the files the launch declares it reads (a process runner's script): never
  // derived from the arguments, which for a sandboxed command are the agent's text.
  const scripts = await Promise.all((launch.readOnly ?? []).filter((file) => isAbsolute(file)).map((file) => fileFolder(file)));
  const readOnly = [
    ...(isAbsolute(launch.command) ? [await realpath(dirname(launch.command))] : []),
    ...scripts.filter((folder): folder is string => folder !== undefined),
    ...extra.readOnly,
  ];
  return wrapWithBwrap(
    { command: launch.command, args: [...launch.args] },
    { workspace: launch.cwd, home, readOnly, writable: extra.writable, readOnlyOver: extra.readOnlyOver },
  );
}

// The real folder of an existing regular file, else undefined.
async function fileFolder(path: string): Promise<string | undefined> {
  const real = await realpath(path).catch(() => undefined);
  if (!real) return undefined;
  const info = await stat(real).catch(() => undefined);
  return info?.isFile() ? dirname(real) : undefined;
}
