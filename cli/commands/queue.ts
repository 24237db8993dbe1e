import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Autonomy } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { presentationOf } from '../../core/process/env.js';
import type { CreateSessionRequest, SendMessageRequest, SessionSummary, WaitResult } from '../../core/orchestrator/index.js';
import { canonicalWorkspace } from '../../core/workspace/index.js';
import { createContext } from '../context.js';
import { connectOrchestrator, type OrchestratorClient } from '../daemon/client.js';
import { connectMatchingOrchestrator } from '../daemon/connect-matching.js';
import { worktreeRequest } from './run.js';
import { isFleet } from '../fleet/backend.js';
import type { FleetClient } from '../fleet/fleet-client.js';
import { submitToFleet } from '../fleet/fleet-commands.js';
import { openFleet } from '../fleet/open-fleet.js';
import { MAX_WAIT_MS } from '../daemon/wire.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface SubmitFlags {
  workspace?: string;
  requestKey?: string;
  model?: string;
  effort?: string;
  autonomy?: string;
  title?: string;
  adapter?: string;
  worktree?: boolean;
}

/**
 * The commands that talk to the orchestrator's service (`serve`): `submit` (the same as
 * `run --detach`), `send-queued` (`send` without following the turn), `wait` and `cancel`. They
 * start a server when none runs; those that submit turns insist on a server with their own
 * config and environment (see connect-matching.ts).
 */
export function registerQueueCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('submit')
    .description('the same as `run --detach`: create a session through the orchestrator and print its id at once')
    .argument('<prompt>', 'what to ask the agent')
    .option('-w, --workspace <dir>', 'workspace directory (default: the current directory); must be inside workspaces.approved')
    .option('--request-key <key>', 'idempotency key: repeating the same submit returns the original session')
    .option('-m, --model <id>', 'model id (default: adapters.<name>.model)')
    .option('-e, --effort <level>', 'reasoning effort')
    .option('-a, --autonomy <level>', 'autonomy: off | low | medium | high')
    .option('-t, --title <title>', 'session title')
    .option('-A, --adapter <name>', 'adapter to use (default: defaults.adapter, else droid)')
    .option('--worktree', "run in a new git worktree of the workspace's repository (in the state directory)")
    .option('--no-worktree', "run in the workspace itself even when the workspace's approved root (or workspaces.isolation) says worktree")
    .action((prompt: string, flags: SubmitFlags, cmd: Command) =>
      withClient(cmd, run, { matching: true }, async (client, ctx) => {
        const request: CreateSessionRequest = {
          adapter: flags.adapter ?? ctx.defaultAdapter,
          workspace: resolve(ctx.cwd, flags.workspace ?? '.'),
          prompt,
          requestKey: flags.requestKey,
          model: flags.model,
          effort: flags.effort,
          autonomy: flags.autonomy as Autonomy | undefined,
          title: flags.title,
          presentation: presentationOf(ctx.env),
          ...worktreeRequest({ worktree: flags.worktree }),
        };
        // A fleet's workers route by the canonical workspace; submit does not wait for a busy fleet.
        if (isFleet(ctx))
          return submitToFleet(ctx, client as FleetClient, { ...request, workspace: await canonicalWorkspace(request.workspace) });
        const handle = await client.createSession(request);
        ctx.out.result(handle, () => handle.sessionId);
        return EXIT.ok;
      }),
    );

  program
    .command('send-queued')
    .description('queue one more turn of a session in the orchestrator and print its run id at once')
    .argument('<session>', 'session id')
    .argument('<prompt>', 'what to ask the agent')
    .option(
      '--interrupt',
      "steer: drop the session's queued turns, interrupt the live one, then run this (an agent that can be steered, e.g. Codex, takes it into its live turn instead)",
    )
    .option('--request-key <key>', 'idempotency key: repeating the same send returns the original run')
    .option('-m, --model <id>', 'model id for this turn')
    .option('-e, --effort <level>', 'reasoning effort for this turn')
    .option('-a, --autonomy <level>', 'autonomy for this turn: off | low | medium | high')
    .action((sessionId: string, prompt: string, flags: Omit<SubmitFlags, 'adapter'> & { interrupt?: boolean }, cmd: Command) =>
      withClient(cmd, run, { matching: true }, async (client, ctx) => {
        const request: SendMessageRequest = {
          sessionId,
          prompt,
          interrupt: flags.interrupt === true,
          requestKey: flags.requestKey,
          model: flags.model,
          effort: flags.effort,
          autonomy: flags.autonomy as Autonomy | undefined,
          presentation: presentationOf(ctx.env),
        };
        // In a fleet, a busy or lost worker does not keep send-queued waiting (see submitToFleet).
        if (isFleet(ctx))
          return submitToFleet(ctx, client as FleetClient, request, (h) =>
            'runId' in h ? `${h.sessionId} ${h.runId} ${h.state}` : `${h.sessionId} queued`,
          );
        const handle = await client.sendMessage(request);
        ctx.out.result(handle, () => `${handle.sessionId} ${handle.runId} ${handle.state}`);
        return EXIT.ok;
      }),
    );

  program
    .command('wait')
    .description('wait until the sessions have no live or queued turn; a timeout is not a failure (exit 0)')
    .argument('<sessions...>', 'session ids')
    .option('--timeout <seconds>', 'give up waiting after this many seconds', parseSeconds)
    .action((sessions: string[], flags: { timeout?: number }, cmd: Command) =>
      withClient(cmd, run, { matching: false }, async (client, ctx) => {
        const result = await waitAll(client, sessions, flags.timeout);
        ctx.out.result(result, () => waitText(result));
        return EXIT.ok;
      }),
    );

  program
    .command('cancel')
    .description("cancel a session's live turn and its queued turns, and print its summary")
    .argument('<session>', 'session id')
    .action((sessionId: string, _flags: unknown, cmd: Command) =>
      withClient(cmd, run, { matching: false }, async (client, ctx) => {
        const summary = await client.cancel(sessionId);
        ctx.out.result(summary, () => summaryLine(summary));
        return EXIT.ok;
      }),
    );
}

type Ctx = Awaited<ReturnType<typeof createContext>>;

// `matching`: the command submits turns, so the server must run with this command's config and environment.
function withClient(
  cmd: Command,
  run: (body: CommandBody) => Promise<void>,
  options: { matching: boolean },
  body: (client: OrchestratorClient, ctx: Ctx) => Promise<number>,
): Promise<void> {
  return run(async () => {
    // A client of the orchestrator: it loads no adapter (the orchestrator loads its sessions' ones).
    const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false });
    // A fleet (state.backend postgres): the database, no local orchestrator.
    if (isFleet(ctx)) {
      const fleet = await openFleet(ctx);
      try {
        return await body(fleet.client, ctx);
      } finally {
        await fleet.close();
      }
    }
    const client = options.matching ? await connectMatchingOrchestrator(ctx) : await connectOrchestrator(ctx, { autoStart: true });
    try {
      return await body(client, ctx);
    } finally {
      await client.close();
    }
  });
}

// The server serves at most 60 s per call; longer (or unbounded) waits are a loop of calls.
async function waitAll(client: OrchestratorClient, sessions: string[], timeoutS: number | undefined): Promise<WaitResult> {
  const deadline = timeoutS === undefined ? Infinity : Date.now() + timeoutS * 1000;
  for (;;) {
    const left = deadline - Date.now();
    const result = await client.wait(sessions, Math.max(0, Math.min(left, MAX_WAIT_MS)));
    if (!result.timedOut || Date.now() >= deadline) return result;
  }
}

function waitText(result: WaitResult): string {
  const lines = result.settled.map(summaryLine);
  if (result.timedOut) lines.push(`timed out; still working: ${result.pending.map((s) => s.sessionId).join(', ')}`);
  for (const pending of result.pending) lines.push(summaryLine(pending));
  return lines.join('\n');
}

function summaryLine(summary: SessionSummary): string {
  const run = summary.latestRun
    ? ` · ${summary.latestRun.runId} ${summary.latestRun.status}${summary.latestRun.reason ? ` (${summary.latestRun.reason})` : ''}`
    : '';
  const queued = summary.queueDepth > 0 ? ` · ${summary.queueDepth} queued` : '';
  return `${summary.sessionId}: ${summary.state}${run}${queued} · ${summary.workspace}`;
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new OneWorksError('usage', `--timeout: expected a number of seconds, got "${value}"`);
  return n;
}
