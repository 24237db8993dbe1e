import type { Command } from 'commander';
import type { Autonomy } from '../../core/adapter.js';
import { createContext } from '../context.js';
import { connectMatchingOrchestrator } from '../daemon/connect-matching.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import { openStore } from '../state.js';
import { followTurn } from './run-follow.js';

interface ForkFlags {
  run?: string;
  model?: string;
  effort?: string;
  autonomy?: string;
  title?: string;
  detach?: boolean;
  requestKey?: string;
}

/**
 * `fork SESSION [PROMPT]`: a new top-level session in the source's workspace (same adapter,
 * labels and session policy) whose first turn carries the source's history up to `--run` as a
 * bounded transcript, then PROMPT. No native fork is claimed and no worktree is made. Followed
 * like `run` (or printed at once with `--detach`).
 */
export function registerForkCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('fork')
    .description("start a new session whose first turn carries another session's history (up to --run) as a transcript")
    .argument('<session>', 'the session to fork')
    .argument('[prompt]', 'what to ask after the transcript (default: continue)', '')
    .option('--run <run>', 'the last run whose history the fork carries (default: all)')
    .option('-m, --model <id>', 'model id for the new session')
    .option('-e, --effort <level>', 'reasoning effort')
    .option('-a, --autonomy <level>', 'autonomy: off | low | medium | high')
    .option('-t, --title <title>', 'title (default: "fork of <the source title>")')
    .option('-d, --detach', 'submit the turn and print the new session id at once')
    .option('--request-key <key>', 'idempotency key: repeating the same fork returns the original session')
    .action((sessionId: string, prompt: string, flags: ForkFlags, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        const store = await openStore(ctx, { own: false });
        const source = await store.readSession(sessionId);
        const adapter = ctx.adapter(source.adapter);
        const cli = await adapter.prepare(ctx.adapterConfig(source.adapter), {
          services: ctx.services,
          cacheDir: ctx.cacheDir,
          lock: await ctx.lockEntries(source.adapter),
          onProgress: ctx.progress,
        });
        const request = {
          sessionId,
          prompt,
          ...(flags.run ? { runId: flags.run } : {}),
          ...(flags.model ? { model: flags.model } : {}),
          ...(flags.effort ? { effort: flags.effort } : {}),
          ...(flags.autonomy ? { autonomy: flags.autonomy as Autonomy } : {}),
          ...(flags.title ? { title: flags.title } : {}),
          ...(flags.requestKey ? { requestKey: flags.requestKey } : {}),
        };
        const client = await connectMatchingOrchestrator(ctx);
        try {
          if (flags.detach) {
            const handle = await client.forkSession(request);
            ctx.out.result(handle, () => handle.sessionId);
            return EXIT.ok;
          }
          const banner = `${source.adapter} ${cli.version} (${cli.source}) · ${source.workspace} · fork of ${sessionId}${flags.run ? ` up to ${flags.run}` : ''}`;
          return await followTurn(ctx, client, store, { kind: 'fork', request }, banner);
        } finally {
          await client.close();
        }
      }),
    );
}
