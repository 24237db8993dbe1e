import type { Command } from 'commander';
import type { SessionDiff } from '../../core/orchestrator/index.js';
import { createContext } from '../context.js';
import { connectOrchestrator, type OrchestratorClient } from '../daemon/client.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

/**
 * `diff`, `merge` and `discard`: a worktree session's changes against its base, merged into the
 * user's repository, or thrown away. They go through the orchestrator (started when none runs),
 * which refuses while the session has a turn running or queued.
 */
export function registerWorktreeCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('diff')
    .description("show a worktree session's changes against its base (committed, uncommitted and untracked)")
    .argument('<session>', 'session id')
    .option('--stat', 'files changed with lines added and removed, without the patch')
    .action((sessionId: string, flags: { stat?: boolean }, cmd: Command) =>
      withClient(cmd, run, async (client, out) => {
        const diff = await client.diffSession({ sessionId, stat: flags.stat === true });
        if (out.json) out.record(diff);
        else if (flags.stat) out.line(statText(diff));
        else out.write(diff.patch ?? '');
        return EXIT.ok;
      }),
    );

  program
    .command('merge')
    .description(
      "merge a worktree session's changes into its base branch (or --into BRANCH); refused on conflicts, a dirty target, or a live turn of the session or in your checkout",
    )
    .argument('<session>', 'session id')
    .option('--squash', 'one commit on the target instead of a merge')
    .option('--into <branch>', 'the branch to merge into (default: the branch the session started from)')
    .action((sessionId: string, flags: { squash?: boolean; into?: string }, cmd: Command) =>
      withClient(cmd, run, async (client, out) => {
        const merged = await client.mergeSession({
          sessionId,
          ...(flags.squash ? { squash: true } : {}),
          ...(flags.into ? { into: flags.into } : {}),
        });
        out.result(merged, () =>
          merged.alreadyMerged
            ? `${merged.into} already contains session ${sessionId}'s changes; nothing changed`
            : `merged session ${sessionId} into ${merged.into}${merged.squash ? ' (squashed)' : merged.fastForward ? ' (fast-forward)' : ''}: ${merged.commit}${merged.checkout ? ` · checkout ${merged.checkout} updated` : ''}`,
        );
        return EXIT.ok;
      }),
    );

  program
    .command('discard')
    .description("remove a worktree session's worktree and branch (its record and events stay); unmerged changes are lost")
    .argument('<session>', 'session id')
    .action((sessionId: string, _flags: unknown, cmd: Command) =>
      withClient(cmd, run, async (client, out) => {
        const summary = await client.discardSession({ sessionId });
        out.result(summary, () => `discarded the worktree and branch of session ${sessionId}`);
        return EXIT.ok;
      }),
    );
}

/** `--stat` text: one line per file, then the totals. */
export function statText(diff: Pick<SessionDiff, 'files' | 'linesAdded' | 'linesRemoved'>): string {
  const lines = diff.files.map((file) => ` ${file.path} | ${file.added === null ? 'binary' : `+${file.added} -${file.removed}`}`);
  lines.push(` ${diff.files.length} file${diff.files.length === 1 ? '' : 's'} changed, +${diff.linesAdded} -${diff.linesRemoved}`);
  return lines.join('\n');
}

function withClient(
  cmd: Command,
  run: (body: CommandBody) => Promise<void>,
  body: (client: OrchestratorClient, out: Awaited<ReturnType<typeof createContext>>['out']) => Promise<number>,
): Promise<void> {
  return run(async () => {
    const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
    const client = await connectOrchestrator(ctx, { autoStart: true });
    try {
      return await body(client, ctx.out);
    } finally {
      await client.close();
    }
  });
}
