import type { Command } from 'commander';
import { collectSecrets } from '../../core/config/index.js';
import { adapterBlockSchema } from '../../core/config/schema.js';
import type { Autonomy } from '../../core/adapter.js';
import type { TurnOutcome } from '../../core/events/index.js';
import { OneWorksError } from '../../core/errors.js';
import { SessionRunner, type SessionRuntime } from '../../core/session/index.js';
import { canonicalWorkspace, checkApproved } from '../../core/workspace/index.js';
import { CONFIG_SCHEMA, createContext, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import { createLiveRenderer } from '../render.js';
import { openStore } from '../state.js';
import { checkTurnModel } from './catalog.js';
import { createDecider, sessionPolicyFromFlags } from '../permissions.js';
import { claimShutdown } from '../shutdown.js';

interface TurnFlags {
  workspace?: string;
  model?: string;
  effort?: string;
  autonomy?: string;
  title?: string;
  adapter?: string;
  allow?: string[];
  deny?: string[];
}

// Commander collector of a repeatable option.
const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerRunCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('run')
    .description('create a session in a workspace and run one turn, streaming a live view')
    .argument('<prompt>', 'what to ask the agent')
    .option('-w, --workspace <dir>', 'workspace directory (default: the current directory); must be inside workspaces.approved')
    .option('-m, --model <id>', 'model id (default: adapters.<name>.model)')
    .option('-e, --effort <level>', 'reasoning effort: low | medium | high | xhigh | max')
    .option('-a, --autonomy <level>', 'autonomy: off | low | medium | high')
    .option('-t, --title <title>', 'session title')
    .option('--adapter <name>', 'adapter to use', 'droid')
    .option('--allow <command>', 'run commands starting with this prefix without asking, in this session (repeatable)', collect, [])
    .option('--deny <command>', 'always deny commands starting with this prefix, in this session (repeatable)', collect, [])
    .action((prompt: string, flags: TurnFlags, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        return runTurn(ctx, { kind: 'new', flags }, prompt);
      }),
    );

  program
    .command('send')
    .description('continue a session with one more turn, in a new process (the agent resumes its native session)')
    .argument('<session>', 'session id (see `one-works sessions list`)')
    .argument('<prompt>', 'what to ask the agent')
    .option('-m, --model <id>', 'model id for this turn')
    .option('-e, --effort <level>', 'reasoning effort for this turn')
    .option('-a, --autonomy <level>', 'autonomy for this turn: off | low | medium | high')
    .action((sessionId: string, prompt: string, flags: TurnFlags, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        return runTurn(ctx, { kind: 'resume', sessionId, flags }, prompt);
      }),
    );
}

type Target = { kind: 'new'; flags: TurnFlags } | { kind: 'resume'; sessionId: string; flags: TurnFlags };

async function runTurn(ctx: CliContext, target: Target, prompt: string): Promise<number> {
  const { out } = ctx;
  const store = await openStore(ctx);
  try {
    const existing = target.kind === 'resume' ? await store.readSession(target.sessionId) : undefined;
    const adapterName = existing?.adapter ?? target.flags.adapter ?? 'droid';
    const adapter = ctx.adapter(adapterName);
    // Flags are validated by the adapter's own schema, so bad values get the same message as in YAML.
    const adapterConfig = parseTurnFlags(adapterBlockSchema(adapterName, adapter.configSchema), ctx.adapterConfig(adapterName), target.flags);
    // `run --allow/--deny` add to the YAML policy; the record keeps them, so `send` reuses them.
    const sessionPolicy = target.kind === 'new' ? sessionPolicyFromFlags(target.flags) : undefined;
    const workspace = await resolveWorkspace(ctx, existing?.workspace ?? target.flags.workspace ?? ctx.cwd, existing !== undefined);

    const cli = await adapter.prepare(adapterConfig, {
      services: ctx.services, cacheDir: ctx.cacheDir,
      lock: await ctx.lockEntries(adapterName),
      onProgress: ctx.progress,
    });
    const cfg = adapterConfig as { autonomy: Autonomy; model?: string; effort?: string; interruptGraceMs?: number; drainFallbackMs?: number };
    // Model and effort are checked against the live catalog (TTL-cached) before any turn starts.
    const lastRun = existing?.runs.at(-1);
    await checkTurnModel(ctx, {
      adapterName,
      config: adapterConfig,
      cli,
      model: target.kind === 'new' ? (target.flags.model ?? cfg.model) : (target.flags.model ?? lastRun?.model),
      effort: target.kind === 'new' ? (target.flags.effort ?? cfg.effort) : (target.flags.effort ?? lastRun?.effort),
    });
    // Aborted when the turn is interrupted or over: an open terminal prompt is then declined.
    const prompts = new AbortController();
    const runtime: SessionRuntime = {
      store,
      stateDir: ctx.stateDir,
      adapter,
      adapterConfig,
      cli,
      secrets: collectSecrets(CONFIG_SCHEMA, ctx.config),
      decide: createDecider(ctx, adapterConfig, out, {
        ...(sessionPolicy ? { sessionPolicy } : {}),
        signal: prompts.signal,
      }),
      interruptGraceMs: cfg.interruptGraceMs ?? ctx.config.orchestrator.cancelGraceMs,
      stopGraceMs: ctx.config.orchestrator.cancelGraceMs,
      sandbox: ctx.config.sandbox,
      ...(cfg.drainFallbackMs === undefined ? {} : { drainFallbackMs: cfg.drainFallbackMs }),
      runTimeoutMs: ctx.config.orchestrator.runTimeoutMs,
    };
    const runner =
      target.kind === 'new'
        ? await SessionRunner.create(runtime, {
            workspace,
            model: target.flags.model ?? cfg.model,
            effort: target.flags.effort ?? cfg.effort,
            autonomy: (target.flags.autonomy as Autonomy | undefined) ?? cfg.autonomy,
            title: target.flags.title,
            ...(sessionPolicy ? { policy: sessionPolicy } : {}),
          })
        : await SessionRunner.resume(runtime, target.sessionId);
    out.addRedactor(runner.redactor);
    out.info(`session ${runner.id} · ${adapterName} ${cli.version} (${cli.source}) · ${workspace}`);
    runner.subscribe(createLiveRenderer(out));

    // Ctrl-C or SIGTERM interrupts the turn (protocol interrupt, then a kill after the grace);
    // the outcome is recorded before the process exits. A second signal exits at once.
    const shutdown = claimShutdown();
    let interrupted = false;
    const onShutdown = (): void => {
      interrupted = true;
      prompts.abort();
      out.info('interrupting the turn (a second Ctrl-C stops everything at once)');
    };
    shutdown.signal.addEventListener('abort', onShutdown, { once: true });
    let outcome: TurnOutcome;
    try {
      outcome = await runner.runTurn(
        prompt,
        target.kind === 'resume'
          ? {
              ...(target.flags.model ? { model: target.flags.model } : {}),
              ...(target.flags.effort ? { effort: target.flags.effort } : {}),
              ...(target.flags.autonomy ? { autonomy: target.flags.autonomy as Autonomy } : {}),
            }
          : {},
        shutdown.signal,
      );
    } finally {
      shutdown.signal.removeEventListener('abort', onShutdown);
      prompts.abort();
      try {
        await runner.close();
      } finally {
        shutdown.release();
      }
    }
    const dir = `${ctx.stateDir}/sessions/${runner.id}`;
    out.result({ type: 'result', sessionId: runner.id, outcome, record: `${dir}/session.json`, events: `${dir}/events.jsonl` }, () =>
      [`session ${runner.id}: ${outcome.status}`, `  record: ${dir}/session.json`, `  events: ${dir}/events.jsonl`, `  continue: one-works send ${runner.id} "…"`].join('\n'),
    );
    if (outcome.status === 'completed') return EXIT.ok;
    return interrupted ? EXIT.interrupted : EXIT.turnNotCompleted;
  } finally {
    await store.releaseOwner();
  }
}

function parseTurnFlags(schema: { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }, base: unknown, flags: TurnFlags): unknown {
  const merged = {
    ...(base as Record<string, unknown>),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.effort ? { effort: flags.effort } : {}),
    ...(flags.autonomy ? { autonomy: flags.autonomy } : {}),
  };
  const parsed = schema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error!.issues[0]!;
    const key = String(issue.path[0] ?? '');
    const flag = ['model', 'effort', 'autonomy'].includes(key) ? `--${key}` : key;
    throw new OneWorksError('usage', `${flag}: ${issue.message}`);
  }
  return parsed.data;
}

async function resolveWorkspace(ctx: CliContext, dir: string, resuming: boolean): Promise<string> {
  if (ctx.implicitApproval && !resuming) {
    ctx.out.info(`no one-works.yaml found: approving the current directory alone (${ctx.cwd})`);
  }
  const canonical = await canonicalWorkspace(dir);
  return checkApproved(canonical, ctx.approvedRoots, {
    configKey: 'workspaces.approved',
    ...(ctx.configPath ? { configPath: ctx.configPath } : {}),
  });
}
