import type { Autonomy } from '../../core/adapter.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import type { Usage } from '../../core/events/index.js';
import type { OrchestratorApi, SessionCheck, WorktreeApi } from '../../core/orchestrator/index.js';
import type { RunStatus } from '../../core/store/index.js';

/** What `compare` calls: the orchestrator's request/response methods (CLI client or MCP). */
export type CompareOrchestrator = Pick<OrchestratorApi, 'createSession' | 'wait' | 'readSession' | 'cancel' | 'status'> &
  Pick<WorktreeApi, 'diffSession' | 'checkSession'>;

/** One contender: an adapter, optionally with a model. */
export interface CompareEntry {
  adapter: string;
  model?: string | undefined;
}

export interface CompareRequest {
  prompt: string;
  /** Any directory of the repository; every contender gets a worktree of it at one base commit. */
  workspace: string;
  entries: CompareEntry[];
  /** Shell command run in each worktree after its turn, under the session's sandbox. */
  check?: string | undefined;
  /** Longest the agents may work, in ms (then their turns are cancelled); default unbounded. */
  timeoutMs?: number | undefined;
  /** At `timeoutMs`, leave the turns running and report them as such instead of cancelling (MCP). */
  keepRunning?: boolean | undefined;
  /** Longest each check may run, in ms. */
  checkTimeoutMs: number;
  base?: string | undefined;
  autonomy?: Autonomy | undefined;
  title?: string | undefined;
}

/** One contender's line of the report. */
export interface CompareRow {
  adapter: string;
  model?: string | undefined;
  sessionId?: string | undefined;
  branch?: string | undefined;
  /** The turn's status; `refused` when the session could not be created. */
  outcome: RunStatus | 'refused';
  reason?: string | undefined;
  /** True when `timeoutMs` expired and the turn was cancelled. */
  timedOut: boolean;
  wallMs?: number | undefined;
  usage?: Usage | undefined;
  filesChanged?: number | undefined;
  linesAdded?: number | undefined;
  linesRemoved?: number | undefined;
  check?: Omit<SessionCheck, 'sessionId'> | undefined;
  /** Why a step failed (refused creation, a diff or check that could not run). */
  error?: string | undefined;
}

export interface CompareReport {
  prompt: string;
  baseCommit?: string | undefined;
  check?: string | undefined;
  rows: CompareRow[];
}

const MAX_WAIT_CALL_MS = 60_000;

/**
 * Runs the same prompt once per entry, each in its own worktree session on one base commit (the
 * first session's; the rest are started at that commit), in parallel as far as the
 * orchestrator's limits allow; waits for every turn (cancelling what outlasts `timeoutMs`);
 * then measures each worktree's diff against the base and runs `check` in it. The sessions stay
 * for `diff`, `send` and `merge`. `progress` gets one line per step for people.
 */
export async function runCompare(
  orchestrator: CompareOrchestrator,
  request: CompareRequest,
  progress: (line: string) => void = () => undefined,
): Promise<CompareReport> {
  if (request.entries.length < 2) throw new OneWorksError(ERROR_CODES.USAGE, 'compare needs at least two adapters or models');
  const rows: CompareRow[] = request.entries.map((entry) => ({ ...entry, outcome: 'refused', timedOut: false }));
  let base = request.base;
  let baseCommit: string | undefined;
  for (const [index, entry] of request.entries.entries()) {
    const row = rows[index]!;
    try {
      const handle = await orchestrator.createSession({
        adapter: entry.adapter,
        workspace: request.workspace,
        prompt: request.prompt,
        ...(entry.model ? { model: entry.model } : {}),
        ...(request.autonomy ? { autonomy: request.autonomy } : {}),
        title: request.title ?? `compare: ${label(entry)}`,
        labels: ['compare'],
        worktree: { ...(base === undefined ? {} : { base }), ...(baseCommit === undefined ? {} : { at: baseCommit }) },
      });
      row.sessionId = handle.sessionId;
      row.outcome = handle.state === 'queued' ? 'queued' : 'running';
      const summary = await orchestrator.status(handle.sessionId);
      row.branch = summary.worktree?.branch;
      // The rest start at the first one's commit, on the same base branch.
      baseCommit ??= summary.worktree?.baseCommit;
      base ??= summary.worktree?.baseRef;
      progress(`${label(entry)}: session ${handle.sessionId} ${handle.state} on ${row.branch ?? '?'}`);
    } catch (error) {
      // The first refusal of a shared cause (not a repository, not approved) refuses them all.
      if (index === 0 && isOneWorksError(error) && !isOneWorksError(error, ERROR_CODES.MODEL_UNAVAILABLE)) throw error;
      row.error = error instanceof Error ? error.message : String(error);
      progress(`${label(entry)}: refused: ${row.error}`);
    }
  }
  await settle(orchestrator, rows, request, progress);
  return { prompt: request.prompt, ...(baseCommit ? { baseCommit } : {}), ...(request.check ? { check: request.check } : {}), rows };
}

/**
 * The report of sessions a compare started earlier (MCP `compare` with `sessions`, after a
 * call that returned before every turn ended): waits for them like {@link runCompare}, then
 * measures and checks each. No session is created.
 */
export async function reportCompare(
  orchestrator: CompareOrchestrator,
  sessionIds: string[],
  request: Pick<CompareRequest, 'check' | 'timeoutMs' | 'keepRunning' | 'checkTimeoutMs'>,
  progress: (line: string) => void = () => undefined,
): Promise<CompareReport> {
  const rows: CompareRow[] = [];
  let prompt = '';
  for (const sessionId of sessionIds) {
    const detail = await orchestrator.readSession({ sessionId, maxEvents: 1 });
    prompt ||= detail.latestRun?.prompt ?? '';
    rows.push({
      adapter: detail.summary.adapter,
      ...(detail.latestRun?.settings.model ? { model: detail.latestRun.settings.model } : {}),
      sessionId,
      branch: detail.summary.worktree?.branch,
      outcome: detail.latestRun?.status ?? 'queued',
      timedOut: false,
    });
  }
  await settle(orchestrator, rows, { ...request, prompt }, progress);
  const baseCommit = (await orchestrator.status(sessionIds[0]!)).worktree?.baseCommit;
  return { prompt, ...(baseCommit ? { baseCommit } : {}), ...(request.check ? { check: request.check } : {}), rows };
}

// Waits for the started rows, then measures those whose turn is over.
async function settle(
  orchestrator: CompareOrchestrator,
  rows: CompareRow[],
  request: Pick<CompareRequest, 'check' | 'timeoutMs' | 'keepRunning' | 'checkTimeoutMs' | 'prompt'>,
  progress: (line: string) => void,
): Promise<void> {
  const started = rows.filter((row) => row.sessionId !== undefined);
  const unsettled = await waitForTurns(orchestrator, started, request.timeoutMs, progress, request.keepRunning === true);
  await Promise.all(started.filter((row) => !unsettled.has(row.sessionId!)).map((row) => measure(orchestrator, row, request, progress)));
}

/** `adapter` or `adapter/model`, as the table names a contender. */
export function label(entry: CompareEntry): string {
  return entry.model ? `${entry.adapter}/${entry.model}` : entry.adapter;
}

// Waits in calls of at most 60 s, reporting each session as it settles; cancels the rest at the deadline.
async function waitForTurns(
  orchestrator: CompareOrchestrator,
  rows: CompareRow[],
  timeoutMs: number | undefined,
  progress: (line: string) => void,
  keepRunning: boolean,
): Promise<Set<string>> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  const pending = new Set(rows.map((row) => row.sessionId!));
  while (pending.size > 0) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const result = await orchestrator.wait([...pending], Math.min(left, MAX_WAIT_CALL_MS));
    for (const summary of result.settled) {
      if (!pending.delete(summary.sessionId)) continue;
      const row = rows.find((r) => r.sessionId === summary.sessionId)!;
      progress(
        `${label(row)}: ${summary.latestRun?.status ?? summary.state}${summary.latestRun?.reason ? ` (${summary.latestRun.reason})` : ''}`,
      );
    }
    if (!result.timedOut && result.pending.length === 0) break;
  }
  if (keepRunning) {
    for (const sessionId of pending) {
      const row = rows.find((r) => r.sessionId === sessionId)!;
      row.outcome = (await orchestrator.status(sessionId)).latestRun?.status ?? row.outcome;
    }
    return pending;
  }
  for (const sessionId of pending) {
    const row = rows.find((r) => r.sessionId === sessionId)!;
    row.timedOut = true;
    progress(`${label(row)}: timed out; cancelling`);
    await orchestrator.cancel(sessionId);
  }
  return new Set();
}

// Fills a row from the session's latest run, its diff against the base and its check.
async function measure(
  orchestrator: CompareOrchestrator,
  row: CompareRow,
  request: Pick<CompareRequest, 'check' | 'checkTimeoutMs'>,
  progress: (line: string) => void,
): Promise<void> {
  const sessionId = row.sessionId!;
  const detail = await orchestrator.readSession({ sessionId, maxEvents: 1 });
  const run = detail.latestRun;
  if (run) {
    row.outcome = run.status;
    row.reason = run.reason;
    row.usage = run.usage;
    if (run.startedAt && run.endedAt) row.wallMs = Date.parse(run.endedAt) - Date.parse(run.startedAt);
  }
  try {
    const diff = await orchestrator.diffSession({ sessionId, stat: true });
    row.filesChanged = diff.files.length;
    row.linesAdded = diff.linesAdded;
    row.linesRemoved = diff.linesRemoved;
    if (request.check) {
      progress(`${label(row)}: running the check`);
      const { sessionId: _id, ...check } = await orchestrator.checkSession({
        sessionId,
        command: request.check,
        timeoutMs: request.checkTimeoutMs,
      });
      row.check = check;
      progress(`${label(row)}: check ${check.passed ? 'passed' : 'failed'}`);
    }
  } catch (error) {
    row.error = error instanceof Error ? error.message : String(error);
  }
}
