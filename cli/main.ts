import { Command, CommanderError, Option } from 'commander';
import { currentView, ViewDeclined, viewStdio } from './process-view.js';
import { ERROR_CODES, type ErrorCode, isOneWorksError } from '../core/errors.js';
import { useConfigValueCache } from '../core/config/value-cache.js';
import { installExitCleanup } from '../core/process/child-registry.js';
import { type CommandModule, commandModulesFor } from './command-table.js';
import type { EarlySeed } from './early-intent.js';
import { putEarlySeed, takeEarlySeed } from './early-seed.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { processRedactor } from './output.js';
import { packageVersion } from './package-root.js';
import { installShutdownHandlers } from './shutdown.js';
import type { TextSink } from './stdio.js';
import { jsonTerminalSafe, terminalSafe } from './terminal-text.js';

// The build (scripts/build.js) reads the table from the bundle: which commands share a code cache.
export { tableCommandNames } from './command-table.js';
// cli/bin.cjs exits a command of a lean bundle once its output is written.
export { outputWritten } from './stdio.js';

/** Global flags every command accepts. */
export interface GlobalOptions {
  config?: string;
  json?: boolean;
  verbose?: boolean;
}

/** A command's body: returns the exit code. */
export type CommandBody = () => Promise<number>;

/** What cli/bin.cjs did before it loaded the command. */
export interface MainOptions {
  /** `run`'s intent, told already (cli/early-intent.ts); discarded when no `run` takes it. */
  earlyIntent?: EarlySeed | undefined;
  /** Where this process keeps its config file's parsed value (core/config/value-cache.ts): a build's commands only. */
  configValueCache?: string | undefined;
}

/**
 * Runs the `one-works` command line and returns the process exit code. User errors print one
 * actionable message (no stack unless --verbose); exit codes come from one table (exit-codes.ts).
 */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  // Run by the orchestrator for a thin client (cli/process-view.ts): the server's process is not
  // this command's, so neither its exit nor its signals are taken over, and no early intent is there.
  const view = currentView();
  if (options.configValueCache !== undefined) useConfigValueCache(options.configValueCache);
  if (!view) {
    installExitCleanup();
    putEarlySeed(options.earlyIntent);
  }
  const { stdout, stderr } = viewStdio();
  let exitCode: number = EXIT.ok;
  let verbose = argv.includes('--verbose');
  const json = argv.includes('--json');
  const run = async (body: CommandBody): Promise<void> => {
    exitCode = await body();
  };

  const program = createProgram();
  program.configureOutput({
    writeErr: (s) => stderr.write(terminalSafe(s)),
    writeOut: (s) => stdout.write(terminalSafe(s)),
  });
  program.hook('preAction', (cmd) => {
    verbose = Boolean(cmd.optsWithGlobals().verbose);
  });

  // Only the modules of the command being run are loaded (all of them for help or an unknown command).
  const modules: CommandModule[] = await Promise.all(commandModulesFor(argv).map((load) => load()));
  for (const register of modules) register(program, run);

  const removeShutdownHandlers = view ? () => undefined : installShutdownHandlers();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // The client runs the command itself.
    if (error instanceof ViewDeclined) throw error;
    if (isOneWorksError(error)) {
      if (json) printJsonError(stderr, error.code, error.message);
      else printError(stderr, `one-works: ${error.message}`);
      if (verbose && error.stack) printError(stderr, error.stack);
      return exitCodeFor(error.code);
    }
    const message = error instanceof Error ? error.message : String(error);
    if (json) printJsonError(stderr, ERROR_CODES.INTERNAL, `internal error: ${message}`);
    else printError(stderr, `one-works: internal error: ${message}`);
    if (verbose && error instanceof Error && error.stack) printError(stderr, error.stack);
    return EXIT.internal;
  } finally {
    removeShutdownHandlers();
    // Not taken (the command line failed to parse, or was not the `run` the early tell read): its agent goes.
    if (!view) await takeEarlySeed()?.discard();
  }
}

/** The `one-works` program with its global options (every command's module registers its commands on it). */
export function createProgram(): Command {
  return new Command('one-works')
    .description(
      'One Works: run coding-agent CLIs (droid, Claude Code, Codex, Gemini CLI, ACP agents) in isolated, pinned, observable sessions',
    )
    .version(packageVersion(), '-V, --version')
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
}

// In --json mode an error is one JSON line on stderr, `{"error":{"code","message"}}`, so a program
// reads the stable code without parsing prose; stdout keeps only results.
function printJsonError(stderr: TextSink, code: ErrorCode, message: string): void {
  const line = JSON.stringify({ error: { code, message: processRedactor.redact(message) } });
  stderr.write(`${jsonTerminalSafe(line)}\n`);
}

// An error may quote a secret or the agent's text (a tool's output, a title): redacted, made inert.
function printError(stderr: TextSink, text: string): void {
  stderr.write(`${terminalSafe(processRedactor.redact(text))}\n`);
}
