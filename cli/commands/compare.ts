import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Autonomy } from '../../core/adapter.js';
import { AutonomySchema } from '../../core/store/index.js';
import { OneWorksError } from '../../core/errors.js';
import { compareTable } from '../compare/compare-table.js';
import { runCompare, type CompareEntry, type CompareReport } from '../compare/run-compare.js';
import { ADAPTER_NAMES, createContext, type CliContext } from '../context.js';
import { connectMatchingOrchestrator } from '../daemon/connect-matching.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface CompareFlags {
  adapters?: string;
  models?: string;
  check?: string;
  timeout?: number;
  checkTimeout: number;
  workspace?: string;
  base?: string;
  autonomy?: string;
}

/** Default bound of each `--check` run, in seconds. */
const DEFAULT_CHECK_TIMEOUT_S = 600;

/**
 * `compare`: the same prompt once per adapter (or per model), each in its own worktree session
 * on one base commit, run in parallel within the orchestrator's limits; then a table (or
 * `--json`: the report) with outcome, wall time, tokens, files and lines changed, and the
 * `--check` result in each worktree. Exits 0 when at least one contender completed (and passed
 * the check, with one), 1 otherwise. The sessions stay for diff, send, merge and discard.
 */
export function registerCompareCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('compare')
    .description('run one prompt with several adapters or models side by side, each in its own git worktree, and compare the results')
    .argument('<prompt>', 'what to ask every agent')
    .option(
      '--adapters <names>',
      `comma-separated adapters (default: every adapter the config enables; known: ${ADAPTER_NAMES.join(', ')})`,
    )
    .option('--models <ids>', 'comma-separated models of one adapter (one session per model)')
    .option('--check <command>', 'a shell command run in each worktree afterwards, under the same sandbox (e.g. "npm test")')
    .option('--timeout <seconds>', 'cancel the turns still running after this many seconds', (v) => seconds('--timeout', v))
    .option('--check-timeout <seconds>', 'longest each check may run', (v) => seconds('--check-timeout', v), DEFAULT_CHECK_TIMEOUT_S)
    .option('-w, --workspace <dir>', 'a directory of the repository (default: the current directory)')
    .option('--base <ref>', 'the commit every worktree starts from (default: the current HEAD)')
    .option('-a, --autonomy <level>', 'autonomy of every session: off | low | medium | high')
    .action((prompt: string, flags: CompareFlags, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        return compareCommand(ctx, prompt, flags);
      }),
    );
}

async function compareCommand(ctx: CliContext, prompt: string, flags: CompareFlags): Promise<number> {
  const entries = compareEntries(ctx, flags);
  const autonomy = flags.autonomy === undefined ? undefined : parseAutonomy(flags.autonomy);
  // A cold managed install shows its progress here, before any session starts.
  for (const adapter of new Set(entries.map((entry) => entry.adapter))) {
    await ctx.adapter(adapter).prepare(ctx.adapterConfig(adapter), {
      services: ctx.services,
      cacheDir: ctx.cacheDir,
      lock: await ctx.lockEntries(adapter),
      onProgress: ctx.progress,
    });
  }
  const client = await connectMatchingOrchestrator(ctx);
  let report: CompareReport;
  try {
    report = await runCompare(
      client,
      {
        prompt,
        workspace: resolve(ctx.cwd, flags.workspace ?? '.'),
        entries,
        check: flags.check,
        ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 }),
        checkTimeoutMs: flags.checkTimeout * 1000,
        base: flags.base,
        autonomy,
      },
      (line) => ctx.out.info(line),
    );
  } finally {
    await client.close();
  }
  ctx.out.result(report, () => compareTable(report));
  const succeeded = report.rows.some((row) => row.outcome === 'completed' && (report.check === undefined || row.check?.passed === true));
  return succeeded ? EXIT.ok : EXIT.turnNotCompleted;
}

/** The contenders: one per model of one adapter (`--models`), else one per adapter. */
export function compareEntries(
  ctx: Pick<CliContext, 'adapter' | 'adapterConfig' | 'enabledAdapters' | 'defaultAdapter'>,
  flags: Pick<CompareFlags, 'adapters' | 'models'>,
): CompareEntry[] {
  // Default: every adapter the config enables (with --models: the default adapter).
  const adapters = list(flags.adapters) ?? (flags.models === undefined ? ctx.enabledAdapters() : [ctx.defaultAdapter]);
  for (const adapter of adapters) ctx.adapterConfig(adapter);
  const models = list(flags.models);
  if (models === undefined) return adapters.map((adapter) => ({ adapter }));
  if (flags.adapters !== undefined && adapters.length !== 1) {
    throw new OneWorksError('usage', '--models compares the models of one adapter; name at most one with --adapters');
  }
  return models.map((model) => ({ adapter: adapters[0]!, model }));
}

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw new OneWorksError('usage', `expected a comma-separated list, got "${value}"`);
  return items;
}

function seconds(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new OneWorksError('usage', `${flag}: expected a positive number of seconds, got "${value}"`);
  return n;
}

function parseAutonomy(value: string): Autonomy {
  const parsed = AutonomySchema.safeParse(value);
  if (!parsed.success) throw new OneWorksError('usage', `--autonomy: expected one of off|low|medium|high, got "${value}"`);
  return parsed.data;
}
