import { Command, CommanderError, Option } from 'commander';
import { isOneWorksError } from '../core/errors.js';
import { installExitCleanup } from '../core/process/index.js';
import { registerAdapterCommands } from './commands/adapters.js';
import { registerAskCommands } from './commands/asks.js';
import { registerCatalogCommands } from './commands/catalog.js';
import { registerConfigCommands } from './commands/config.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerForkCommand } from './commands/fork.js';
import { registerImportCommand } from './commands/import.js';
import { registerHousekeepingCommands } from './commands/housekeeping.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerRunCommands } from './commands/run.js';
import { registerSessionCommands } from './commands/sessions.js';
import { registerServeCommands } from './commands/serve.js';
import { registerServerCommands } from './commands/server.js';
import { registerCompareCommand } from './commands/compare.js';
import { registerWorktreeCommands } from './commands/worktree.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { processRedactor } from './output.js';
import { installShutdownHandlers } from './shutdown.js';
import { terminalSafe } from './terminal-text.js';

/** Global flags every command accepts. */
export interface GlobalOptions {
  config?: string;
  json?: boolean;
  verbose?: boolean;
}

/** A command's body: returns the exit code. */
export type CommandBody = () => Promise<number>;

/**
 * Runs the `one-works` command line and returns the process exit code. User errors print one
 * actionable message (no stack unless --verbose); exit codes come from one table (exit-codes.ts).
 */
export async function main(argv: string[]): Promise<number> {
  installExitCleanup();
  let exitCode: number = EXIT.ok;
  let verbose = argv.includes('--verbose');
  const run = async (body: CommandBody): Promise<void> => {
    exitCode = await body();
  };

  const program = new Command('one-works')
    .description('One Works: run coding-agent CLIs (Factory droid) in isolated, pinned, observable sessions')
    .version(await packageVersion(), '-V, --version')
    .addOption(
      new Option(
        '-c, --config <file>',
        'path to one-works.yaml (default ./one-works.yaml, then $XDG_CONFIG_HOME/one-works/one-works.yaml)',
      ),
    )
    .option('--json', 'machine-readable output: one JSON value per line on stdout')
    .option('--verbose', 'show stack traces for errors, and cache hits and version checks of agent CLIs')
    .showHelpAfterError()
    .exitOverride();
  program.configureOutput({
    writeErr: (s) => process.stderr.write(terminalSafe(s)),
    writeOut: (s) => process.stdout.write(terminalSafe(s)),
  });
  program.hook('preAction', (cmd) => {
    verbose = Boolean(cmd.optsWithGlobals().verbose);
  });

  registerConfigCommands(program, run);
  registerAdapterCommands(program, run);
  registerDoctorCommand(program, run);
  registerCatalogCommands(program, run);
  registerRunCommands(program, run);
  registerAskCommands(program, registerSessionCommands(program, run), run);
  registerServeCommands(program, run);
  registerServerCommands(program, run);
  registerHousekeepingCommands(program, run);
  registerMcpCommand(program, run);
  registerImportCommand(program, run);
  registerForkCommand(program, run);
  registerWorktreeCommands(program, run);
  registerCompareCommand(program, run);

  const removeShutdownHandlers = installShutdownHandlers();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (isOneWorksError(error)) {
      printError(`one-works: ${error.message}`);
      if (verbose && error.stack) printError(error.stack);
      return exitCodeFor(error.code);
    }
    printError(`one-works: internal error: ${error instanceof Error ? error.message : String(error)}`);
    if (verbose && error instanceof Error && error.stack) printError(error.stack);
    return EXIT.internal;
  } finally {
    removeShutdownHandlers();
  }
}

// An error may quote a secret or the agent's text (a tool's output, a title): redacted, made inert.
function printError(text: string): void {
  process.stderr.write(`${terminalSafe(processRedactor.redact(text))}\n`);
}

async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
