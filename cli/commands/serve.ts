import type { Command } from 'commander';
import { Option } from 'commander';
import { OneWorksError } from '../../core/errors.js';
import { restoreDeferredCaCerts } from '../../core/install/extra-ca.js';
import { createContext } from '../context.js';
import { runServe } from '../daemon/serve-main.js';
import type { CommandBody, GlobalOptions } from '../main.js';

/**
 * `serve`: the orchestrator as a local service (see serve-main.ts), or a fleet worker. A module
 * of its own, apart from the commands that talk to a server (queue.ts): a server's start loads
 * none of the client's modules, and keeps a code cache of its own (cli/run-build.cjs).
 */
export function registerServeCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('serve')
    .description('run the orchestrator as a local service on <state>/orchestrator.sock until SIGTERM/SIGINT')
    .option(
      '--idle-exit-ms <ms>',
      'exit after this long without clients or turns (default: stay up; auto-started servers use orchestrator.idleExitMs)',
      parseMs,
    )
    .option(
      '--worker <name>',
      'run as the worker NAME of a fleet on the PostgreSQL state backend (state.backend: postgres): take turns from its queue until SIGTERM/SIGINT',
    )
    .addOption(new Option('--auto', 'started by a client: quiet when another server owns the state, idle exit on').hideHelp())
    .addOption(
      new Option(
        '--intent <json>',
        "with --auto: what the client's `run` is about to create; its agent starts as the server starts",
      ).hideHelp(),
    )
    .action((flags: { idleExitMs?: number; auto?: boolean; worker?: string; intent?: string }, cmd: Command) =>
      run(async () => {
        // An auto-started server's NODE_EXTRA_CA_CERTS, deferred past its start, is back before anything reads the environment.
        restoreDeferredCaCerts(process.env);
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: 'lazy' });
        if (flags.worker !== undefined) {
          if (flags.auto || flags.idleExitMs !== undefined)
            throw new OneWorksError('usage', '--worker takes neither --auto nor --idle-exit-ms');
          return (await import('../daemon/worker-main.js')).runWorker(ctx, flags.worker);
        }
        return runServe(ctx, { auto: flags.auto === true, idleExitMs: flags.idleExitMs, intent: flags.intent });
      }),
    );
}

function parseMs(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new OneWorksError('usage', `--idle-exit-ms: expected a whole number of milliseconds, got "${value}"`);
  return n;
}
