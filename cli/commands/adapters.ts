import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import semver from 'semver';
import { parseDocument } from 'yaml';
import { type Adapter, defaultCliRange, type ProbeResult, type ResolvedCli } from '../../core/adapter.js';
import { collectSecrets, recordProbe, setYamlValue } from '../../core/config/index.js';
import { OneWorksError } from '../../core/errors.js';
import { probeCli } from '../../core/session/index.js';
import { CONFIG_SCHEMA, createContext, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { formatVersionFacts } from '../version-facts.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface CliBlock {
  source: 'managed' | 'system' | 'path';
  version: string;
  path?: string;
  range?: string;
}

export function registerAdapterCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  const adapters = program.command('adapters').description('inspect, install, probe and upgrade the agent CLIs');
  const withCtx =
    (body: (ctx: CliContext, name: string, ...rest: string[]) => Promise<number>) =>
    (...args: unknown[]) => {
      const cmd = args.at(-1) as Command;
      const positional = args.slice(0, -2) as string[];
      return run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        return body(ctx, positional[0] ?? ctx.defaultAdapter, ...positional.slice(1));
      });
    };

  adapters
    .command('list')
    .description("show each enabled adapter's selected CLI: source, path, version, version facts and qualification")
    .action(withCtx((ctx) => listAdapters(ctx)));
  adapters
    .command('which')
    .description('print the selected CLI binary; fails when it is outside the pinned range')
    .argument('[adapter]', 'adapter name (default: defaults.adapter, else droid)')
    .action(withCtx((ctx, name) => whichAdapter(ctx, name)));
  adapters
    .command('install')
    .description('install (managed) or verify (system/path) the pinned CLI ahead of time')
    .argument('[adapter]', 'adapter name (default: defaults.adapter, else droid)')
    .action(withCtx((ctx, name) => installAdapter(ctx, name)));
  adapters
    .command('probe')
    .description('start the selected CLI in a throwaway HOME, open a session without a prompt, and report its versions')
    .argument('[adapter]', 'adapter name (default: defaults.adapter, else droid)')
    .action(withCtx((ctx, name) => probeAdapter(ctx, name)));
  adapters
    .command('upgrade')
    .description('install and probe another CLI version; on success rewrite the pin in one-works.yaml and record it in one-works.lock')
    .argument('<adapter>', 'adapter name')
    .argument('<version>', 'exact version, e.g. 0.225.2')
    .action(withCtx((ctx, name, version) => upgradeAdapter(ctx, name, version!)));
}

async function prepare(ctx: CliContext, name: string, config: unknown, install: boolean): Promise<ResolvedCli> {
  return ctx.adapter(name).prepare(config, {
    services: ctx.services,
    cacheDir: ctx.cacheDir,
    lock: await ctx.lockEntries(name),
    onProgress: ctx.progress,
    install,
  });
}

function qualification(cli: ResolvedCli): string {
  return cli.expected ? (cli.expected.qualifiedBy === 'table' ? 'qualified' : 'probed') : 'unknown';
}

function describe(cli: ResolvedCli): Record<string, unknown> {
  return {
    source: cli.source,
    path: cli.binaryPath,
    version: cli.version,
    range: cli.range,
    facts: cli.expected?.facts ?? null,
    status: qualification(cli),
  };
}

async function listAdapters(ctx: CliContext): Promise<number> {
  let failed = false;
  for (const name of ctx.enabledAdapters()) {
    // A process harness has no cli block: its command is its CLI.
    const block = (ctx.adapterConfig(name) as { cli?: CliBlock }).cli ?? { source: 'path', version: '-' };
    try {
      const cli = await prepare(ctx, name, ctx.adapterConfig(name), false);
      ctx.out.result(
        { adapter: name, ...describe(cli) },
        () =>
          `${name}  ${cli.source}  ${cli.version}  ${cli.expected ? formatVersionFacts(cli.expected.facts) : 'facts unknown'}  ${qualification(cli)}\n  ${cli.binaryPath}`,
      );
    } catch (error) {
      failed = true;
      const message = error instanceof Error ? error.message : String(error);
      ctx.out.result(
        { adapter: name, source: block.source, version: block.version, error: message },
        () => `${name}  ${block.source}  ${block.version}  not usable: ${message}`,
      );
    }
  }
  return failed ? EXIT.cli : EXIT.ok;
}

async function whichAdapter(ctx: CliContext, name: string): Promise<number> {
  const cli = await prepare(ctx, name, ctx.adapterConfig(name), false);
  ctx.out.result({ adapter: name, ...describe(cli) }, () => cli.binaryPath);
  return EXIT.ok;
}

async function installAdapter(ctx: CliContext, name: string): Promise<number> {
  const started = Date.now();
  const cli = await prepare(ctx, name, ctx.adapterConfig(name), true);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const how = cli.source !== 'managed' ? 'verified' : cli.package?.fromCache ? 'already installed' : `installed in ${seconds}s`;
  ctx.out.result(
    {
      adapter: name,
      ...describe(cli),
      integrity: cli.package?.integrity ?? null,
      fromCache: cli.package?.fromCache ?? null,
      seconds: Number(seconds),
    },
    () => `${name} ${cli.version} (${cli.source}) ${how}: ${cli.binaryPath}`,
  );
  return EXIT.ok;
}

// The adapter checks its own version facts; One Works never assumes one CLI's versions.
function compare(adapter: Adapter<unknown>, cli: ResolvedCli, probe: ProbeResult): { ok: boolean; problems: string[] } {
  const problems = adapter.checkVersionFacts(probe.facts, cli.expected, cli.version);
  return { ok: problems.length === 0, problems };
}

async function probeAdapter(ctx: CliContext, name: string): Promise<number> {
  const config = ctx.adapterConfig(name);
  const cli = await prepare(ctx, name, config, true);
  const probe = await probeCli(ctx.adapter(name), config, cli, collectSecrets(CONFIG_SCHEMA, ctx.config));
  const verdict = compare(ctx.adapter(name), cli, probe);
  ctx.out.result(
    {
      adapter: name,
      ...describe(cli),
      announced: probe.facts,
      details: probe.details,
      ok: verdict.ok,
      problems: verdict.problems,
    },
    () =>
      [
        `${name} ${cli.version} (${cli.source}) at ${cli.binaryPath}`,
        `  announced: ${formatVersionFacts(probe.facts)}`,
        `  expected:  ${cli.expected ? `${formatVersionFacts(cli.expected.facts)} (${qualification(cli)})` : 'unknown version: not in the table or one-works.lock'}`,
        verdict.ok
          ? cli.expected
            ? '  match'
            : `  probe passed; \`one-works adapters upgrade ${name} ${cli.version}\` records it`
          : `  MISMATCH: ${verdict.problems.join('; ')}`,
      ].join('\n'),
  );
  return verdict.ok ? EXIT.ok : EXIT.agent;
}

async function upgradeAdapter(ctx: CliContext, name: string, version: string): Promise<number> {
  if (!semver.valid(version)) throw new OneWorksError('usage', `"${version}" is not an exact version (e.g. 0.225.2)`);
  if (!ctx.configPath) {
    throw new OneWorksError(
      'config_not_found',
      'no one-works.yaml to upgrade; create one (see one-works.yaml.example) or pass --config FILE',
    );
  }
  const current = ctx.adapterConfig(name) as { cli: CliBlock };
  // A range written in the file is kept when it admits the new pin, else moved to the new pin's
  // minor; a range that is only the schema's default follows the pin.
  const rangeInFile = await yamlHas(ctx.configPath, ['adapters', name, 'cli', 'range']);
  const keepRange = rangeInFile && current.cli.range !== undefined && semver.satisfies(version, current.cli.range);
  const cliBlock: CliBlock = { ...current.cli, version };
  if (!keepRange) delete cliBlock.range;
  const config = { ...current, cli: cliBlock };
  const cli = await prepare(ctx, name, config, true);
  const probe = await probeCli(ctx.adapter(name), config, cli, collectSecrets(CONFIG_SCHEMA, ctx.config));
  const verdict = compare(ctx.adapter(name), cli, probe);
  if (!verdict.ok) {
    throw new OneWorksError('probe_failed', `upgrade to ${name} ${version} refused, nothing changed: ${verdict.problems.join('; ')}`);
  }
  // Only after a passing probe: the lock first (so the new pin is never unqualified), then the YAML.
  await recordProbe(ctx.lockPath, name, cli.version, {
    facts: { ...probe.facts },
    ...(cli.package ? { integrity: cli.package.integrity, package: cli.package.name } : {}),
    probedAt: new Date().toISOString(),
  });
  await setYamlValue(ctx.configPath, ['adapters', name, 'cli', 'version'], version);
  const movedRange = rangeInFile && !keepRange;
  if (movedRange) await setYamlValue(ctx.configPath, ['adapters', name, 'cli', 'range'], defaultCliRange(version));
  ctx.out.result(
    {
      adapter: name,
      from: current.cli.version,
      to: version,
      facts: probe.facts,
      config: ctx.configPath,
      lock: ctx.lockPath,
    },
    () =>
      [
        `${name} upgraded ${current.cli.version} → ${version} (${formatVersionFacts(probe.facts)})`,
        `  ${ctx.configPath}: adapters.${name}.cli.version = ${version}${movedRange ? ` (range set to ${defaultCliRange(version)}: the old one excluded the new pin)` : ''}`,
        `  ${ctx.lockPath}: probe recorded`,
      ].join('\n'),
  );
  return EXIT.ok;
}

// Static imports: a dynamic import('yaml') in the esbuild bundle resolves yaml's CommonJS build
// without its named exports (`parseDocument is not a function`, exit 70 from `adapters upgrade`).
async function yamlHas(file: string, path: string[]): Promise<boolean> {
  return parseDocument(await readFile(file, 'utf8')).hasIn(path);
}
