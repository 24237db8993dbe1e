import type { Command } from 'commander';
import type { ResolvedCli } from '../../core/adapter.js';
import { loadCatalog, validateModelAndEffort, type CachedValue, type Catalog, type CatalogModel } from '../../core/catalog/index.js';
import { collectSecrets } from '../../core/config/index.js';
import { Redactor } from '../../core/redact.js';
import { CONFIG_SCHEMA, createContext, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface CatalogFlags {
  adapter?: string;
  all?: boolean;
  refresh?: boolean;
  model?: string;
}

/** Registers `one-works models` and `one-works tools`. */
export function registerCatalogCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('models')
    .description("list the models the adapter's CLI offers (BYOK models from the config included), with their reasoning efforts")
    .option('--adapter <name>', 'adapter to ask (default: defaults.adapter, else droid)')
    .option('--all', 'also show deprecated and disabled models')
    .option('--refresh', 'ask the CLI again even if the cached list is fresh')
    .action((flags: CatalogFlags, cmd: Command) =>
      run(async () => listModels(await createContext(cmd.optsWithGlobals<GlobalOptions>()), flags)),
    );
  program
    .command('tools')
    .description('list the tools the agent can call with a model (default: the configured one) at the configured autonomy')
    .option('--adapter <name>', 'adapter to ask (default: defaults.adapter, else droid)')
    .option('-m, --model <id>', 'model whose tools to list')
    .option('--refresh', 'ask the CLI again even if the cached list is fresh')
    .action((flags: CatalogFlags, cmd: Command) =>
      run(async () => listTools(await createContext(cmd.optsWithGlobals<GlobalOptions>()), flags)),
    );
}

async function fetchCatalog(
  ctx: CliContext,
  name: string,
  config: unknown,
  cli: ResolvedCli,
  options: { modelId?: string; force?: boolean },
): Promise<CachedValue<Catalog>> {
  const secrets = collectSecrets(CONFIG_SCHEMA, ctx.config);
  const redactor = new Redactor();
  for (const secret of secrets) redactor.register(secret);
  ctx.out.addRedactor(redactor);
  return loadCatalog({
    adapter: ctx.adapter(name),
    config,
    cli,
    cacheDir: ctx.cacheDir,
    secrets,
    request: options.modelId === undefined ? {} : { modelId: options.modelId },
    ...(options.force ? { force: true } : {}),
  });
}

async function prepared(ctx: CliContext, name: string): Promise<{ config: unknown; cli: ResolvedCli }> {
  const config = ctx.adapterConfig(name);
  const cli = await ctx
    .adapter(name)
    .prepare(config, { services: ctx.services, cacheDir: ctx.cacheDir, lock: await ctx.lockEntries(name), onProgress: ctx.progress });
  return { config, cli };
}

async function listModels(ctx: CliContext, flags: CatalogFlags): Promise<number> {
  flags.adapter ??= ctx.defaultAdapter;
  const { config, cli } = await prepared(ctx, flags.adapter);
  const catalog = await fetchCatalog(ctx, flags.adapter, config, cli, { force: Boolean(flags.refresh) });
  const all = catalog.value.models;
  const shown = flags.all ? all : all.filter((m) => !m.deprecated && !m.disabled);
  ctx.out.result({ adapter: flags.adapter, cliVersion: cli.version, ...freshness(catalog), models: shown }, () => {
    const hidden = all.length - shown.length;
    const header = `${flags.adapter} ${cli.version} · ${shown.length} models${hidden > 0 ? ` (${hidden} deprecated or disabled hidden; --all shows them)` : ''} · ${describeAge(catalog)}`;
    const rows = shown.map((m) => [
      m.id,
      m.displayName,
      m.custom ? `BYOK ${m.provider ?? ''}`.trim() : (m.provider ?? ''),
      effortsOf(m),
      flagsOf(m),
    ]);
    return [header, ...table(rows)].join('\n');
  });
  return EXIT.ok;
}

async function listTools(ctx: CliContext, flags: CatalogFlags): Promise<number> {
  flags.adapter ??= ctx.defaultAdapter;
  const { config, cli } = await prepared(ctx, flags.adapter);
  const catalog = await fetchCatalog(ctx, flags.adapter, config, cli, {
    ...(flags.model ? { modelId: flags.model } : {}),
    force: Boolean(flags.refresh),
  });
  if (flags.model) validateModelAndEffort(catalog.value.models, { model: flags.model });
  const { tools } = catalog.value;
  ctx.out.result({ adapter: flags.adapter, cliVersion: cli.version, model: flags.model ?? null, ...freshness(catalog), tools }, () => {
    const header = `${flags.adapter} ${cli.version} · ${tools.length} tools${flags.model ? ` for ${flags.model}` : ''} · ${describeAge(catalog)}`;
    const rows = tools.map((t) => [t.id, t.displayName, t.category ?? '', t.allowed === false ? 'not allowed' : '']);
    return [header, ...table(rows)].join('\n');
  });
  return EXIT.ok;
}

function freshness(catalog: CachedValue<Catalog>): { fetchedAt: string; fromCache: boolean } {
  return { fetchedAt: new Date(catalog.fetchedAt).toISOString(), fromCache: catalog.fromCache };
}

function describeAge(catalog: CachedValue<Catalog>): string {
  if (!catalog.fromCache) return 'just listed';
  return `cached ${Math.max(0, Math.round((Date.now() - catalog.fetchedAt) / 1000))}s ago (--refresh asks again)`;
}

// "off|low|high*": the default effort starred; a model with only "none" has no effort setting.
function effortsOf(model: CatalogModel): string {
  if (model.efforts.length === 0) return 'efforts: ?';
  if (model.efforts.length === 1 && model.efforts[0] === 'none') return 'efforts: n/a';
  return `efforts: ${model.efforts.map((e) => (e === model.defaultEffort ? `${e}*` : e)).join('|')}`;
}

function flagsOf(model: CatalogModel): string {
  const out: string[] = [];
  if (model.deprecated) out.push('deprecated');
  if (model.disabled) out.push(`disabled${model.disabledReason ? `: ${model.disabledReason}` : ''}`);
  return out.join(', ');
}

function table(rows: string[][]): string[] {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) => `  ${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd());
}
