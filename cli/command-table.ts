import type { Command } from 'commander';
import type { CommandBody } from './main.js';

/** A command module's registration: adds its commands to the program. */
export type CommandModule = (program: Command, run: (body: CommandBody) => Promise<void>) => void;

/** Loads one command module (a dynamic import, so that a command pays only for its own modules). */
type LoadCommandModule = () => Promise<CommandModule>;

/**
 * Every command of `one-works`, by name, with the module that registers it. Each module is
 * imported only when one of its commands runs: `one-works --version` loads none, `sessions`
 * never loads the MCP SDK or the installer. The order is the order of `--help`.
 */
// `sessions` carries subcommands from three modules (asks: `sessions resolve`; housekeeping:
// `sessions archive|rm` and `adapters prune`), so sessions, asks, answer and adapters load together.
// zod's JIT goes off first: these commands parse each record and log line once (see schema-compilation.ts).
async function loadSessionCommands(): Promise<CommandModule> {
  (await import('./schema-compilation.js')).withoutSchemaCompilation();
  const [sessions, asks, housekeeping] = await Promise.all([
    import('./commands/sessions.js'),
    import('./commands/asks.js'),
    import('./commands/housekeeping.js'),
  ]);
  return (program, run) => {
    asks.registerAskCommands(program, sessions.registerSessionCommands(program, run), run);
    housekeeping.registerSessionHousekeeping(program, run);
  };
}

async function loadAdapterCommands(): Promise<CommandModule> {
  const [adapters, housekeeping] = await Promise.all([import('./commands/adapters.js'), import('./commands/housekeeping.js')]);
  return (program, run) => {
    adapters.registerAdapterCommands(program, run);
    housekeeping.registerAdapterHousekeeping(program, run);
  };
}

const COMMAND_TABLE: ReadonlyArray<{ names: readonly string[]; load: LoadCommandModule }> = [
  { names: ['config'], load: async () => (await import('./commands/config.js')).registerConfigCommands },
  { names: ['adapters'], load: loadAdapterCommands },
  { names: ['sessions', 'events', 'asks', 'answer'], load: loadSessionCommands },
  { names: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctorCommand },
  { names: ['models', 'tools'], load: async () => (await import('./commands/catalog.js')).registerCatalogCommands },
  { names: ['run', 'send'], load: async () => (await import('./commands/run.js')).registerRunCommands },
  // `serve` apart from its clients: a server's start loads none of their modules and has its own code cache.
  // zod's JIT goes off before the server's modules build their schemas (see schema-compilation.ts).
  {
    names: ['serve'],
    load: async () => {
      (await import('./schema-compilation.js')).withoutSchemaCompilation();
      return (await import('./commands/serve.js')).registerServeCommand;
    },
  },
  {
    names: ['submit', 'send-queued', 'wait', 'cancel'],
    load: async () => (await import('./commands/queue.js')).registerQueueCommands,
  },
  { names: ['mcp'], load: async () => (await import('./commands/mcp.js')).registerMcpCommand },
  { names: ['import'], load: async () => (await import('./commands/import.js')).registerImportCommand },
  { names: ['fork'], load: async () => (await import('./commands/fork.js')).registerForkCommand },
  { names: ['server'], load: async () => (await import('./commands/server.js')).registerServerCommands },
  { names: ['diff', 'merge', 'discard'], load: async () => (await import('./commands/worktree.js')).registerWorktreeCommands },
  { names: ['compare'], load: async () => (await import('./commands/compare.js')).registerCompareCommand },
  { names: ['fleet'], load: async () => (await import('./commands/fleet.js')).registerFleetCommand },
];

/** The command names of the table, for each module in table order. */
export function tableCommandNames(): string[][] {
  return COMMAND_TABLE.map((command) => [...command.names]);
}

/** Global options that take a value (the next argument is not a command name). */
const VALUE_OPTIONS = new Set(['-c', '--config']);
/** Global flags that end the command line's meaning without a command. */
const VERSION_FLAGS = new Set(['-V', '--version']);

/**
 * The command modules `argv` needs: none for `--version` before any command, the one that
 * registers the first non-option argument, and every module when there is no command (help), or
 * it is `help` or unknown (so that help and commander's "unknown command" message stay complete).
 */
export function commandModulesFor(argv: readonly string[]): LoadCommandModule[] {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (VERSION_FLAGS.has(arg)) return [];
    if (VALUE_OPTIONS.has(arg)) {
      i += 1;
      continue;
    }
    if (arg.startsWith('-')) continue;
    const entry = COMMAND_TABLE.find((command) => command.names.includes(arg));
    return entry ? [entry.load] : COMMAND_TABLE.map((command) => command.load);
  }
  return COMMAND_TABLE.map((command) => command.load);
}
