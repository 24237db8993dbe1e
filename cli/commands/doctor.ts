import { access, constants, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import semver from 'semver';
import { collectSecrets } from '../../core/config/index.js';
import { isOneWorksError } from '../../core/errors.js';
import type { ResolvedCli } from '../../core/adapter.js';
import { loadCatalog } from '../../core/catalog/index.js';
import { probeCli } from '../../core/session/index.js';
import { configWarnings } from '../config-warnings.js';
import { FileStore } from '../../core/store/index.js';
import { CONFIG_SCHEMA, createContext, type CliContext } from '../context.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { serverStatus } from './server.js';
import { formatVersionFacts } from '../version-facts.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A warning does not fail the doctor. */
  warn?: boolean;
  /** The exit code of a failed check (the README's table: 4 binary, 5 protocol, 6 state); not printed. */
  exit?: number;
}

export function registerDoctorCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('doctor')
    .description('check the selected CLI (present, runnable, in range, protocol), cache, state dir and credentials')
    .action((_o: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        // Config findings come with the workspace ones below, once.
        const notes = ctx
          .enabledAdapters()
          .flatMap((name) => (ctx.adapter(name).diagnose?.(ctx.adapterConfig(name)) ?? []).filter((note) => !note.config));
        const online: Check[] = [];
        for (const name of ctx.enabledAdapters())
          online.push(...((await ctx.adapter(name).diagnoseOnline?.(ctx.adapterConfig(name))) ?? []));
        const checks: Check[] = [
          ...(await adapterChecks(ctx)),
          await cacheCheck(ctx),
          await stateCheck(ctx),
          ...(await databaseCheck(ctx)),
          await orchestratorCheck(ctx),
          ...(await configWarnings(ctx)),
          ...(await sessionChecks(ctx)),
          ...notes,
          ...online,
          ...limitationChecks(ctx),
        ];
        for (const { exit: _exit, ...c } of checks)
          ctx.out.result(c, () => `${c.warn ? 'warn' : c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
        // The first failed check decides, with the code its kind of problem has everywhere else.
        const failed = checks.find((c) => !c.ok && !c.warn);
        return failed ? (failed.exit ?? EXIT.cli) : EXIT.ok;
      }),
    );
}

// Each declared limitation as a warning: calls the agent runs without asking, so the policy cannot decide them.
function limitationChecks(ctx: CliContext): Check[] {
  return ctx.enabledAdapters().flatMap((name) =>
    (ctx.adapter(name).limitations ?? []).map((limitation) => ({
      name: `${name} limitation ${limitation.tools.join(', ')}`,
      ok: true,
      warn: true,
      detail: `${limitation.kind} calls run without asking One Works; the policy's ${limitation.defeats.join(', ')} rules do not hold for them: ${limitation.reason}`,
    })),
  );
}

async function adapterChecks(ctx: CliContext): Promise<Check[]> {
  const checks: Check[] = [];
  for (const name of ctx.enabledAdapters()) {
    const config = ctx.adapterConfig(name);
    const adapter = ctx.adapter(name);
    let cli: Awaited<ReturnType<typeof adapter.prepare>>;
    try {
      cli = await adapter.prepare(config, {
        services: ctx.services,
        cacheDir: ctx.cacheDir,
        lock: await ctx.lockEntries(name),
        install: false,
      });
    } catch (error) {
      checks.push({
        name: `${name} binary`,
        ok: false,
        detail: error instanceof Error ? error.message : String(error),
        exit: isOneWorksError(error) ? exitCodeFor(error.code) : EXIT.cli,
      });
      continue;
    }
    checks.push({ name: `${name} binary`, ok: true, detail: `${cli.binaryPath} (${cli.source}) runs and reports ${cli.version}` });
    checks.push({
      name: `${name} version`,
      ok: semver.satisfies(cli.version, cli.range),
      detail: `${cli.version} within ${cli.range}`,
      exit: EXIT.cli,
    });
    if (!cli.expected) {
      checks.push({
        name: `${name} version facts`,
        ok: false,
        detail: `${cli.version} is not qualified (table) or probed (one-works.lock); run \`one-works adapters upgrade ${name} ${cli.version}\``,
        exit: EXIT.agent,
      });
      continue;
    }
    try {
      const probe = await probeCli(adapter, config, cli, collectSecrets(CONFIG_SCHEMA, ctx.config));
      const problems = adapter.checkVersionFacts(probe.facts, cli.expected, cli.version);
      checks.push({
        name: `${name} version facts`,
        ok: problems.length === 0,
        detail: `announced ${formatVersionFacts(probe.facts)}; expected ${formatVersionFacts(cli.expected.facts)} (${cli.expected.qualifiedBy})${problems.length > 0 ? `: ${problems.join('; ')}` : ''}`,
        exit: EXIT.agent,
      });
    } catch (error) {
      checks.push({
        name: `${name} version facts`,
        ok: false,
        detail: error instanceof Error ? error.message : String(error),
        exit: isOneWorksError(error) ? exitCodeFor(error.code) : EXIT.agent,
      });
    }
    const model = await modelCheck(ctx, name, cli);
    if (model) checks.push(model);
  }
  return checks;
}

// Running or not, pid, since when, load; never starts one.
async function orchestratorCheck(ctx: CliContext): Promise<Check> {
  const status = await serverStatus(ctx);
  if (!status.running) return { name: 'orchestrator', ok: true, detail: `not running for ${ctx.stateDir} (started on demand)` };
  return {
    name: 'orchestrator',
    ok: true,
    detail: `running, pid ${status.pid}${status.auto ? ' (auto-started)' : ' (`one-works serve`)'}${status.startedAt ? ` since ${status.startedAt}` : ''}; ${status.live} live and ${status.queued} queued turns, ${status.otherClients} other clients`,
  };
}

// A default model that is no BYOK id (those are checked from the config) must be in the live catalog.
async function modelCheck(ctx: CliContext, name: string, cli: ResolvedCli): Promise<Check | undefined> {
  const adapter = ctx.adapter(name);
  const config = ctx.adapterConfig(name) as { model?: string };
  if (!adapter.catalog || config.model === undefined || config.model === 'inherit' || config.model.startsWith('custom:')) return undefined;
  try {
    const catalog = await loadCatalog({ adapter, config, cli, cacheDir: ctx.cacheDir, secrets: collectSecrets(CONFIG_SCHEMA, ctx.config) });
    const found = catalog.value.models.some((m) => m.id === config.model);
    return found
      ? { name: `${name} model`, ok: true, detail: `${config.model} is in the catalog` }
      : {
          name: `${name} model`,
          ok: true,
          warn: true,
          detail: `adapters.${name}.model ${config.model} is not in the catalog (\`one-works models --all\` lists it)`,
        };
  } catch (error) {
    return {
      name: `${name} model`,
      ok: true,
      warn: true,
      detail: `could not list the catalog to check ${config.model}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

async function cacheCheck(ctx: CliContext): Promise<Check> {
  try {
    await mkdir(ctx.cacheDir, { recursive: true });
    await access(ctx.cacheDir, constants.W_OK);
    return { name: 'cache', ok: true, detail: `${ctx.cacheDir} is writable` };
  } catch (error) {
    return { name: 'cache', ok: false, detail: `${ctx.cacheDir} is not writable: ${(error as Error).message}`, exit: EXIT.cli };
  }
}

async function stateCheck(ctx: CliContext): Promise<Check> {
  try {
    const s = await stat(ctx.stateDir);
    if (!s.isDirectory())
      return {
        name: 'state dir',
        ok: false,
        detail: `${ctx.stateDir} is not a directory; move it away or set state.directory`,
        exit: EXIT.state,
      };
    const mode = s.mode & 0o777;
    return mode === 0o700
      ? { name: 'state dir', ok: true, detail: `${ctx.stateDir} is private (0700)` }
      : {
          name: 'state dir',
          ok: false,
          detail: `${ctx.stateDir} has mode 0${mode.toString(8)}; run \`chmod 700 ${ctx.stateDir}\``,
          exit: EXIT.state,
        };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { name: 'state dir', ok: true, warn: true, detail: `${ctx.stateDir} does not exist yet (created 0700 on first run)` };
    return { name: 'state dir', ok: false, detail: `${ctx.stateDir} cannot be used: ${code ?? String(error)}`, exit: EXIT.state };
  }
}

// With state.backend: postgres, whether the database answers and its schema version (nothing for the file backend).
async function databaseCheck(ctx: CliContext): Promise<Check[]> {
  const postgres = ctx.config.state.postgres;
  if (ctx.config.state.backend !== 'postgres' || !postgres) return [];
  // Loaded only here: the pg driver is no cost for the file backend.
  const { createPostgresStore } = await import('../../core/store/postgres-store.js');
  const { POSTGRES_SCHEMA_VERSION, postgresWhere, readSchemaVersion } = await import('../../core/store/index.js');
  const where = postgresWhere(postgres.url);
  try {
    // Read-only: doctor never migrates.
    const store = await createPostgresStore({ url: postgres.url, migrate: false });
    const found = await store.withClient(readSchemaVersion).finally(() => store.close());
    const schema =
      found > POSTGRES_SCHEMA_VERSION
        ? `schema version ${found} is newer than this One Works (${POSTGRES_SCHEMA_VERSION}): upgrade One Works`
        : `schema version ${found} (this One Works: ${POSTGRES_SCHEMA_VERSION}${found < POSTGRES_SCHEMA_VERSION ? ', migrated at start' : ''})`;
    if (found > POSTGRES_SCHEMA_VERSION) return [{ name: 'state database', ok: false, exit: EXIT.state, detail: `${where}: ${schema}` }];
    return [{ name: 'state database', ok: true, detail: `${where} answers, ${schema}` }];
  } catch (error) {
    return [{ name: 'state database', ok: false, exit: EXIT.state, detail: error instanceof Error ? error.message : String(error) }];
  }
}

// One failed check per session whose record cannot be read (nothing when all are fine, or when
// there is no state yet): each is left out of everything until fixed or moved away.
async function sessionChecks(ctx: CliContext): Promise<Check[]> {
  let scan: Awaited<ReturnType<FileStore['scanSessions']>>;
  try {
    scan = await new FileStore(resolve(ctx.stateDir)).scanSessions();
  } catch {
    return [];
  }
  if (scan.corrupt.length === 0) return [{ name: 'session records', ok: true, detail: `${scan.records.length} readable` }];
  return scan.corrupt.map((bad) => ({
    name: `session ${bad.sessionId}`,
    ok: false,
    exit: EXIT.state,
    detail: `record ${bad.file} is malformed: ${bad.reason}; fix it or move ${dirname(bad.file)} away (the other sessions are not affected)`,
  }));
}
