import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { RuntimeEvent } from '../../core/events/index.js';
import type { SessionSummary } from '../../core/orchestrator/index.js';
import { compareTimes, type CorruptSession, type SessionRecord, type Store } from '../../core/store/index.js';
import { isFleet } from '../fleet/backend.js';
import type { FleetState } from '../fleet/fleet-client.js';
import { openFleet } from '../fleet/open-fleet.js';
// The module itself, not core/worktree/index.js (git, execa): listing sessions runs no git.
import { worktreeFacts, worktreeState, type WorktreeFacts } from '../../core/worktree/worktree-state.js';
import { createContext, type CliContext } from '../context.js';
import { ERROR_CODES, isOneWorksError } from '../../core/errors.js';
import { asRecovered } from '../offline-view.js';
import { socketPath } from '../daemon/wire.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import { registerReconcileCommand } from './sessions-reconcile.js';
import { createLiveRenderer, formatUsage } from '../render.js';
import { openStore } from '../state.js';
import { formatVersionFacts } from '../version-facts.js';

/** Registers `sessions list|show` and `events`; returns the `sessions` command (for its other subcommands). */
export function registerSessionCommands(program: Command, run: (body: CommandBody) => Promise<void>): Command {
  const sessions = program.command('sessions').description('list and show recorded sessions');
  const list = (cmd: Command): Promise<void> =>
    run(async () => {
      const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false, adapterBlocks: 'when-read' });
      const all = Boolean(cmd.optsWithGlobals<{ all?: boolean }>().all);
      if (isFleet(ctx)) return listFleet(ctx, all);
      const store = await openStore(ctx, { own: false, syncReads: true });
      const scan = await store.scanSessions();
      const live = await liveSummaries(ctx);
      // Without a server, what an owner that died left `running` is shown as it will be recovered.
      const recovered = live ? scan.records : await asRecovered(ctx.stateDir, store, scan.records);
      const records = recovered.filter((r) => all || r.archived !== true).sort((a, b) => compareTimes(a.createdAt, b.createdAt));
      const rows = await Promise.all(
        records.map(async (r) => listRow(r, live?.get(r.id), r.title ? undefined : await agentTitle(store, r.id))),
      );
      printList(ctx, rows, scan.corrupt);
      if (scan.corrupt.length > 0) {
        ctx.out.info(
          `${scan.corrupt.length} session record(s) cannot be read and are left out of everything else until fixed or moved away; \`one-works doctor\` names them too`,
        );
      }
      return EXIT.ok;
    });
  sessions.option('--all', 'include archived sessions');
  sessions
    .command('list', { isDefault: true })
    .description('one line per session (archived ones only with --all)')
    .option('--all', 'include archived sessions')
    .action((_o: unknown, cmd: Command) => list(cmd));
  registerReconcileCommand(sessions, run);
  sessions
    .command('show')
    .description("a session's record: workspace, state, runs with their outcome")
    .argument('<id>', 'session id')
    .action((id: string, _o: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false, adapterBlocks: 'when-read' });
        if (isFleet(ctx)) return showFleet(ctx, id);
        const store = await openStore(ctx, { own: false, syncReads: true });
        const recorded = await store.readSession(id);
        const [r = recorded] = await asRecovered(ctx.stateDir, store, [recorded]);
        // The record as stored, its worktree with the state every view names (live, merged, discarded).
        const shown = r.worktree ? { ...r, worktree: { ...r.worktree, state: worktreeState(r.worktree) } } : r;
        ctx.out.result(shown, () => showText(r, `${ctx.stateDir}/sessions/${r.id}`));
        return EXIT.ok;
      }),
    );

  program
    .command('events')
    .description("print a session's recorded events (--follow keeps printing new ones)")
    .argument('<id>', 'session id')
    .option('-f, --follow', 'wait for new events until interrupted')
    .action((id: string, flags: { follow?: boolean }, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false, adapterBlocks: 'when-read' });
        // A fleet's events are rows of its database, followed through NOTIFY plus reads.
        const fleet = isFleet(ctx) ? await openFleet(ctx) : undefined;
        try {
          const store = fleet?.store ?? (await openStore(ctx, { own: false, syncReads: true }));
          // A queued create has no record yet; its events come once a worker takes it.
          if (fleet) await fleet.client.status(id);
          else await store.readSession(id);
          const render = ctx.out.json ? (e: RuntimeEvent) => ctx.out.record(e) : eventLine(ctx.out);
          let lastSeq = 0;
          for (const event of await store.readEvents(id)) {
            render(event);
            lastSeq = event.seq;
          }
          if (flags.follow) {
            const abort = new AbortController();
            const stop = (): void => abort.abort();
            process.once('SIGINT', stop);
            process.once('SIGTERM', stop);
            try {
              for await (const event of store.followEvents(id, { afterSeq: lastSeq, signal: abort.signal })) render(event);
            } catch (error) {
              if (!abort.signal.aborted) throw error;
            } finally {
              process.removeListener('SIGINT', stop);
              process.removeListener('SIGTERM', stop);
            }
          }
          return EXIT.ok;
        } finally {
          await fleet?.close();
        }
      }),
    );
  return sessions;
}

// `sessions` in a fleet: the database's records with the queue's view (a queued create has no
// record yet: it is listed `queued`; a session waiting on a lost worker `worker_lost`).
async function listFleet(ctx: CliContext, all: boolean): Promise<number> {
  const fleet = await openFleet(ctx);
  try {
    const [summaries, scan] = await Promise.all([fleet.client.list(), fleet.store.scanSessions()]);
    const records = new Map(scan.records.map((r) => [r.id, r]));
    const rows = await Promise.all(
      summaries
        .filter((s) => all || s.archived !== true)
        .sort((a, b) => compareTimes(a.createdAt, b.createdAt))
        .map(async (summary) => {
          const record = records.get(summary.sessionId);
          const row = record
            ? listRow(record, summary, record.title ? undefined : await agentTitle(fleet.store, record.id))
            : queuedRow(summary);
          return summary.fleet
            ? { ...row, status: summary.fleet.state, ...(summary.fleet.worker ? { worker: summary.fleet.worker } : {}) }
            : row;
        }),
    );
    printList(ctx, rows, scan.corrupt);
    return EXIT.ok;
  } finally {
    await fleet.close();
  }
}

// `sessions show` in a fleet: the record from the database (a queued create: its summary).
async function showFleet(ctx: CliContext, id: string): Promise<number> {
  const fleet = await openFleet(ctx);
  try {
    const summary = await fleet.client.status(id);
    const record = await fleet.store.readSession(id).catch((error: unknown) => {
      if (isOneWorksError(error, ERROR_CODES.SESSION_NOT_FOUND)) return undefined;
      throw error;
    });
    if (!record) {
      ctx.out.result(
        summary,
        () =>
          `session ${id} (${summary.adapter})\n  workspace: ${summary.workspace}\n  state:     queued in the fleet (no worker took it yet)`,
      );
      return EXIT.ok;
    }
    const shown = record.worktree ? { ...record, worktree: { ...record.worktree, state: worktreeState(record.worktree) } } : record;
    const lost =
      summary.fleet?.state === 'worker_lost'
        ? `\n  fleet:     waiting for worker ${summary.fleet.worker ?? '?'}, whose lease expired (worker_lost)`
        : '';
    ctx.out.result(
      summary.fleet ? { ...shown, fleet: summary.fleet } : shown,
      () => showText(record, fleet.store.where, fleetPaths) + lost,
    );
    return EXIT.ok;
  } finally {
    await fleet.close();
  }
}

function fleetPaths(where: string, id: string): { record: string; events: string } {
  return { record: `${where} (sessions, id ${id})`, events: `${where} (events, session ${id})` };
}

// A row of a create that no worker took yet: no record, no run.
function queuedRow(summary: SessionSummary): ListRow {
  return {
    sessionId: summary.sessionId,
    id: summary.sessionId,
    adapter: summary.adapter,
    workspace: summary.workspace,
    status: 'queued',
    queueDepth: summary.queueDepth,
    title: summary.title ?? null,
    importedFrom: null,
    titleSource: summary.title ? 'one-works' : null,
    archived: false,
    runs: 0,
    lastRun: null,
    updatedAt: summary.updatedAt,
    worktree: null,
  };
}

// The running orchestrator's view (state, queue depth) by session; undefined when none runs (a
// reading command never starts one) or when it does not answer (said on stderr: the records
// are listed all the same).
async function liveSummaries(ctx: CliContext): Promise<Map<string, SessionSummary> | undefined> {
  const socket = socketPath(ctx.stateDir);
  // No socket, no orchestrator (tryConnect would answer undefined): the client is not even loaded.
  if (!existsSync(socket)) return undefined;
  const { tryConnect } = await import('../daemon/client.js');
  const client = await tryConnect(socket).catch((error: unknown) => unavailable(ctx, error));
  if (!client) return undefined;
  try {
    return new Map((await client.list()).map((s) => [s.sessionId, s]));
  } catch (error) {
    return unavailable(ctx, error);
  } finally {
    await client.close();
  }
}

function unavailable(ctx: CliContext, error: unknown): undefined {
  if (!isOneWorksError(error, ERROR_CODES.ORCHESTRATOR_UNAVAILABLE) && !isOneWorksError(error, ERROR_CODES.CONNECTION_CLOSED)) throw error;
  ctx.out.info(`${error.message}\nShowing the records as last written.`);
  return undefined;
}

interface ListRow {
  /** The session id, named as in events and MCP. */
  sessionId: string;
  /** The same id under its old name, kept for one release (deprecated). */
  id: string;
  adapter: string;
  workspace: string;
  /**
   * working | idle | needs_attention | failed | closed: the orchestrator's, else the record's; in a
   * fleet also queued (a create no worker took yet) and worker_lost (waiting on a lost worker).
   */
  status: SessionRecord['status'] | FleetState;
  /** In a fleet, with worker_lost: the lost worker that holds the session's HOME. */
  worker?: string;
  /** Turns waiting for admission (0 without a running orchestrator: nothing can be queued then). */
  queueDepth: number;
  /** The One Works title, else the agent's own (see `titleSource`). */
  title: string | null;
  /** The agent CLI record file the session was imported from, or null. */
  importedFrom: string | null;
  /** `one-works` (given with -t or update_session), `agent` (the agent named the session), or null. */
  titleSource: 'one-works' | 'agent' | null;
  archived: boolean;
  runs: number;
  lastRun: { id: string; status: string; reason: string | null } | null;
  updatedAt: string;
  /** A worktree session's worktree: path, branch, base and state (live, merged, discarded); null otherwise. */
  worktree: WorktreeFacts | null;
}

// The agent's own title of a session: the last `settings.changed` that carried one (none when the
// log cannot be read; the other events are checked, not built).
async function agentTitle(store: Pick<Store, 'readEvents'>, id: string): Promise<string | undefined> {
  const events = await store.readEvents(id, { types: ['settings.changed'] }).catch(() => []);
  let title: string | undefined;
  for (const event of events) {
    if (event.type === 'settings.changed' && typeof event.settings.title === 'string') title = event.settings.title;
  }
  return title;
}

function listRow(r: SessionRecord, live: SessionSummary | undefined, agent?: string): ListRow {
  const last = r.runs.at(-1);
  const latest = live?.latestRun
    ? { id: live.latestRun.runId, status: live.latestRun.status, reason: live.latestRun.reason ?? null }
    : undefined;
  return {
    sessionId: r.id,
    id: r.id,
    adapter: r.adapter,
    workspace: r.workspace,
    status: live?.state ?? r.status,
    queueDepth: live?.queueDepth ?? 0,
    title: r.title ?? agent ?? null,
    titleSource: r.title ? 'one-works' : agent ? 'agent' : null,
    archived: r.archived === true,
    importedFrom: r.imported?.source ?? null,
    runs: r.runs.length,
    lastRun: latest ?? (last ? { id: last.id, status: last.status, reason: last.reason ?? null } : null),
    updatedAt: r.updatedAt,
    worktree: r.worktree ? worktreeFacts(r.worktree) : null,
  };
}

// The list: a record per row (JSON) or a line per row, then the malformed records, each with what is wrong.
function printList(ctx: CliContext, rows: ListRow[], corrupt: CorruptSession[]): void {
  if (ctx.out.json) {
    for (const row of rows) ctx.out.record(row);
    for (const bad of corrupt)
      ctx.out.record({ sessionId: bad.sessionId, id: bad.sessionId, status: 'corrupt', file: bad.file, reason: bad.reason });
    return;
  }
  if (rows.length === 0 && corrupt.length === 0) ctx.out.line('no sessions yet');
  for (const row of rows) ctx.out.line(rowLine(row));
  for (const bad of corrupt) ctx.out.line(`${bad.sessionId}  ${'corrupt'.padEnd(15)}  ${bad.reason}  (${bad.file})`);
}

function rowLine(row: ListRow): string {
  const last = row.lastRun;
  const run = last ? `${last.id} ${last.status}${last.reason && last.reason !== last.status ? ` (${last.reason})` : ''}` : 'no runs';
  const state = row.status === 'needs_attention' ? 'needs attention' : row.status;
  const worktree = row.worktree ? `  [worktree ${row.worktree.branch}, ${row.worktree.state}]` : '';
  return `${row.sessionId}  ${row.adapter.padEnd(11)}  ${state.padEnd(15)}  queue ${String(row.queueDepth).padEnd(3)}  ${run.padEnd(28)}  ${row.workspace}${row.title ? `  "${row.title}"` : ''}${worktree}${row.importedFrom ? '  [imported]' : ''}${row.archived ? '  (archived)' : ''}`;
}

function showText(
  r: SessionRecord,
  dir: string,
  paths: (dir: string, id: string) => { record: string; events: string } = (d) => ({
    record: `${d}/session.json`,
    events: `${d}/events.jsonl`,
  }),
): string {
  const { record, events } = paths(dir, r.id);
  const lines = [
    `session ${r.id} (${r.adapter}${r.cliVersion ? ` ${r.cliVersion}` : ''})`,
    `  workspace: ${r.workspace}`,
    `  state:     ${r.status}${r.attention?.length ? ` — ${r.attention.join('; ')}` : ''}`,
    `  created:   ${r.createdAt}`,
    ...(r.title ? [`  title:     ${r.title}`] : []),
    ...(r.imported ? [`  imported:  from ${r.imported.source} (${r.imported.kind}, ${r.imported.importedAt})`] : []),
    ...(r.worktree ? worktreeLines(worktreeFacts(r.worktree)) : []),
    `  record:    ${record}`,
    `  events:    ${events}`,
    `  runs:`,
  ];
  for (const run of r.runs) {
    lines.push(
      `    ${run.id}  ${run.status}${run.reason && run.reason !== run.status ? ` (${run.reason})` : ''}  model=${run.model ?? 'default'} effort=${run.effort ?? 'default'} autonomy=${run.autonomy}${run.mode ? ` mode=${run.mode}` : ''}  ${run.usage ? formatUsage(run.usage) : ''}`,
    );
    lines.push(`      > ${run.prompt.split('\n')[0]}`);
    if (run.text) lines.push(`      < ${run.text.split('\n')[0]}`);
  }
  return lines.join('\n');
}

function worktreeLines(facts: WorktreeFacts): string[] {
  const merged = facts.mergedInto.length > 0 ? ` into ${facts.mergedInto.join(', ')}` : '';
  return [
    `  worktree:  ${facts.path} (${facts.state}${merged})`,
    `  branch:    ${facts.branch} from ${facts.baseRef} at ${facts.baseCommit.slice(0, 12)} in ${facts.repository}`,
  ];
}

function eventLine(out: import('../output.js').Output): (e: RuntimeEvent) => void {
  const live = createLiveRenderer(out);
  return (e) => {
    if (e.type === 'session.started')
      out.line(
        `[${e.at}] session started (${[e.adapter, e.cliVersion].filter(Boolean).join(' ')}; ${formatVersionFacts(e.versionFacts)}${e.resumed ? '; resumed' : ''})`,
      );
    else if (e.type === 'turn.started') out.line(`[${e.at}] turn ${e.runId} started`);
    else if (e.type === 'session.closed') out.line(`[${e.at}] session closed (${e.reason})`);
    else if (e.type === 'run.reconciled')
      out.line(
        `[${e.at}] run ${e.runId} reconciled as ${e.status} (was ${e.previous.status}${e.previous.reason ? `: ${e.previous.reason}` : ''})${e.note ? `: ${e.note}` : ''}`,
      );
    else if (e.type === 'assistant.message') out.line(e.text);
    else live(e);
  };
}
