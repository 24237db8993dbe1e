import { readdir, rm } from '../../core/lazy-fs-promises.js';
import { join } from 'node:path';
import type { Command } from 'commander';
import compareVersions from 'semver/functions/compare.js';
import validVersion from 'semver/functions/valid.js';
import { directorySize, formatBytes } from '../../core/store/index.js';
import { createContext, type CliContext } from '../context.js';
import { socketPath } from '../daemon/wire.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import { openStore } from '../state.js';

// The command group `name`, which must be registered first.
function group(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  if (!found) throw new Error(`register the ${name} commands before the housekeeping ones`);
  return found;
}

// Runs `body` with a context; `adapters: false` for commands that only touch the state.
function withContext(
  run: (body: CommandBody) => Promise<void>,
  adapters: 'all' | false,
): (cmd: Command, body: (ctx: CliContext) => Promise<number>) => Promise<void> {
  return (cmd, body) => run(async () => body(await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters })));
}

/** Housekeeping that people look for: `sessions archive|rm SESSION`, added to the `sessions` group. */
export function registerSessionHousekeeping(program: Command, run: (body: CommandBody) => Promise<void>): void {
  const withCtx = withContext(run, false);
  group(program, 'sessions')
    .command('archive')
    .description('hide a session from `sessions` (shown again with --all); nothing is deleted')
    .argument('<id>', 'session id')
    .option('--undo', 'show it in `sessions` again')
    .action((id: string, flags: { undo?: boolean }, cmd: Command) =>
      withCtx(cmd, async (ctx) => {
        const archived = flags.undo !== true;
        await archiveSession(ctx, id, archived);
        ctx.out.result({ sessionId: id, archived }, () =>
          archived ? `archived ${id} (\`one-works sessions --all\` still lists it)` : `${id} is listed again`,
        );
        return EXIT.ok;
      }),
    );
  group(program, 'sessions')
    .command('rm')
    .description('delete a session: its record, event log and session HOME (refused while it has a live or queued turn)')
    .argument('<id>', 'session id')
    .action((id: string, _flags: unknown, cmd: Command) =>
      withCtx(cmd, async (ctx) => {
        const freedBytes = await removeSession(ctx, id);
        ctx.out.result(
          { sessionId: id, removed: true, freedBytes },
          () => `removed ${id}: record, event log and session HOME (${formatBytes(freedBytes)})`,
        );
        return EXIT.ok;
      }),
    );
}

/** `adapters prune`, added to the `adapters` group. */
export function registerAdapterHousekeeping(program: Command, run: (body: CommandBody) => Promise<void>): void {
  const withCtx = withContext(run, 'all');
  group(program, 'adapters')
    .command('prune')
    .description('remove cached CLI versions that neither the config nor one-works.lock pins; prints what it removes and the bytes freed')
    .option('--dry-run', 'only print what would be removed')
    .action((flags: { dryRun?: boolean }, cmd: Command) => withCtx(cmd, (ctx) => prune(ctx, flags.dryRun === true)));
}

// Through the running orchestrator when there is one (it holds the record); otherwise directly,
// as the state directory's owner for the moment.
async function archiveSession(ctx: CliContext, id: string, archived: boolean): Promise<void> {
  const client = await (await import('../daemon/client.js')).tryConnect(socketPath(ctx.stateDir));
  if (client) {
    try {
      await client.updateSession({ sessionId: id, archived });
    } finally {
      await client.close();
    }
    return;
  }
  const store = await openStore(ctx, { own: true });
  try {
    const record = await store.readSession(id);
    const { archived: _old, ...rest } = record;
    await store.writeSession({ ...rest, ...(archived ? { archived: true } : {}), updatedAt: new Date().toISOString() });
  } finally {
    await store.releaseOwner();
  }
}

// The orchestrator refuses while a turn is live or queued; without one, no turn can be live.
async function removeSession(ctx: CliContext, id: string): Promise<number> {
  const client = await (await import('../daemon/client.js')).tryConnect(socketPath(ctx.stateDir));
  if (client) {
    try {
      return (await client.removeSession(id)).freedBytes;
    } finally {
      await client.close();
    }
  }
  const store = await openStore(ctx, { own: true });
  try {
    return await store.removeSession(id);
  } finally {
    await store.releaseOwner();
  }
}

interface PruneEntry {
  adapter: string;
  version: string;
  path: string;
  bytes: number;
  /** Why it stays (pinned by the config, recorded in the lock); absent when removed. */
  keptBecause?: string;
}

/**
 * `adapters prune`: in `<cache>/cli/<adapter>/`, every version folder of a configured adapter
 * that neither `adapters.<name>.cli.version` nor one-works.lock names is removed. Folders of
 * adapters the config does not name, and anything that is not a version, are left alone.
 */
async function prune(ctx: CliContext, dryRun: boolean): Promise<number> {
  const entries: PruneEntry[] = [];
  for (const adapter of ctx.enabledAdapters()) {
    const dir = join(ctx.cacheDir, 'cli', adapter);
    const versions = (await readdir(dir, { withFileTypes: true }).catch(() => []))
      .filter((e) => e.isDirectory() && validVersion(e.name) === e.name)
      .map((e) => e.name)
      .sort(compareVersions);
    const pinned = (ctx.adapterConfig(adapter) as { cli?: { version?: string } }).cli?.version;
    const locked = await ctx.lockEntries(adapter);
    for (const version of versions) {
      const path = join(dir, version);
      const keptBecause =
        version === pinned ? `adapters.${adapter}.cli.version` : locked.has(version) ? `recorded in ${ctx.lockPath}` : undefined;
      entries.push({ adapter, version, path, bytes: await directorySize(path), ...(keptBecause ? { keptBecause } : {}) });
    }
  }
  const removed = entries.filter((e) => e.keptBecause === undefined);
  for (const entry of removed) {
    if (!dryRun) await rm(entry.path, { recursive: true, force: true });
    ctx.out.result(
      { type: 'removed', dryRun, ...entry },
      () => `${dryRun ? 'would remove' : 'removed'} ${entry.adapter} ${entry.version}  ${formatBytes(entry.bytes)}  ${entry.path}`,
    );
  }
  for (const entry of entries.filter((e) => e.keptBecause !== undefined)) {
    ctx.out.result(
      { type: 'kept', ...entry },
      () => `kept ${entry.adapter} ${entry.version}  ${formatBytes(entry.bytes)}  (${entry.keptBecause})`,
    );
  }
  const freedBytes = removed.reduce((sum, e) => sum + e.bytes, 0);
  ctx.out.result({ type: 'summary', dryRun, removed: removed.length, freedBytes }, () =>
    removed.length === 0
      ? `nothing to prune in ${join(ctx.cacheDir, 'cli')}`
      : `${dryRun ? 'would free' : 'freed'} ${formatBytes(freedBytes)} (${removed.length} ${removed.length === 1 ? 'version' : 'versions'})`,
  );
  return EXIT.ok;
}
