import { z } from 'zod';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { reportCompare, runCompare, type CompareReport } from '../compare/run-compare.js';
import { compareTable } from '../compare/compare-table.js';
import { adapterOrDefault, PromptInput, SessionIdInput, WorkspaceInput } from './inputs.js';
import { MAX_WAIT_SECONDS } from './limits.js';
import { SessionSummaryOutSchema } from './schemas.js';
import { summaryText } from './text.js';
import { defineTool, type AnyMcpTool } from './tool.js';

// Worktree sessions (create_session with worktree: true): their diff, merge and discard, and
// compare, which runs one prompt with several adapters or models side by side.

const ChangedFileOut = z.object({ path: z.string(), added: z.number().int().nullable(), removed: z.number().int().nullable() });

const DiffOutSchema = z.object({
  sessionId: z.string(),
  branch: z.string(),
  baseCommit: z.string(),
  files: z.array(ChangedFileOut).describe('changed files with lines added and removed (null for binary files)'),
  linesAdded: z.number().int(),
  linesRemoved: z.number().int(),
  patch: z.string().optional().describe('the unified diff (absent with stat: true)'),
});

const MergeOutSchema = z.object({
  sessionId: z.string(),
  into: z.string(),
  commit: z.string().describe("the target branch's tip after the merge"),
  squash: z.boolean(),
  fastForward: z.boolean(),
  alreadyMerged: z.boolean().describe('true when the target already had these changes: nothing changed'),
  checkout: z.string().optional().describe('the checkout of the target branch that git updated, if it is checked out'),
});

const CheckOut = z.object({
  command: z.string(),
  passed: z.boolean(),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  outputTail: z.string().describe('the last lines of its output'),
});

const CompareOutSchema = z.object({
  prompt: z.string(),
  baseCommit: z.string().optional().describe('the commit every worktree started from'),
  check: z.string().optional(),
  rows: z.array(
    z.object({
      adapter: z.string(),
      model: z.string().optional(),
      sessionId: z.string().optional(),
      branch: z.string().optional(),
      outcome: z.string().describe('the turn status (queued and running: not over yet, call compare again with sessions), or refused'),
      reason: z.string().optional(),
      timedOut: z.boolean(),
      wallMs: z.number().optional(),
      usage: z.looseObject({ reported: z.boolean() }).optional(),
      filesChanged: z.number().int().optional(),
      linesAdded: z.number().int().optional(),
      linesRemoved: z.number().int().optional(),
      check: CheckOut.optional(),
      error: z.string().optional(),
    }),
  ),
});

const DEFAULT_COMPARE_WAIT_SECONDS = 45;

export const WORKTREE_TOOLS: readonly AnyMcpTool[] = [
  defineTool({
    name: 'diff_session',
    description:
      "A worktree session's changes against its base commit: what it committed on its branch and what it left uncommitted or untracked. Fails with no_worktree for a session not created with worktree: true.",
    input: z.strictObject({ session: SessionIdInput, stat: z.boolean().optional().describe('files and line counts only, no patch') }),
    output: DiffOutSchema,
    readOnly: true,
    async run(orchestrator, { session, stat }) {
      const diff = await orchestrator.diffSession({ sessionId: session, stat: stat === true });
      const head = `${diff.files.length} files changed, +${diff.linesAdded} -${diff.linesRemoved} against ${diff.baseCommit.slice(0, 12)}`;
      return {
        result: diff,
        text: [head, ...diff.files.map((f) => `${f.path} +${f.added ?? '?'} -${f.removed ?? '?'}`), diff.patch ?? ''].join('\n'),
      };
    },
  }),
  defineTool({
    name: 'merge_session',
    description:
      "Merge a worktree session's changes into its base branch (or into). Refused, changing nothing, with merge_conflict on conflicts, target_dirty when the target's checkout has uncommitted changes, session_busy while a turn of the session runs or is queued, workspace_busy while a turn in the user's checkout (or another merge) holds its workspace lock. Never a force.",
    input: z.strictObject({
      session: SessionIdInput,
      squash: z.boolean().optional().describe('one commit on the target instead of a merge'),
      into: z.string().min(1).max(256).optional().describe('the branch to merge into (default: the branch the session started from)'),
    }),
    output: MergeOutSchema,
    readOnly: false,
    async run(orchestrator, { session, ...rest }) {
      const merged = await orchestrator.mergeSession({ sessionId: session, ...rest });
      const text = merged.alreadyMerged ? `${merged.into} already has these changes` : `merged into ${merged.into}: ${merged.commit}`;
      return { result: merged, text };
    },
  }),
  defineTool({
    name: 'discard_session',
    description:
      "Remove a worktree session's worktree and branch; its unmerged changes are lost. The session is closed (its record and events stay). Refused while a turn runs or is queued.",
    input: z.strictObject({ session: SessionIdInput }),
    output: SessionSummaryOutSchema,
    readOnly: false,
    async run(orchestrator, { session }) {
      const summary = await orchestrator.discardSession({ sessionId: session });
      return { result: summary, text: summaryText(summary) };
    },
  }),
  defineTool({
    name: 'compare',
    description: `Run one prompt with several adapters (or several models of one adapter), each in its own git worktree session on one base commit, in parallel within the limits; then report outcome, wall time, tokens, files and lines changed, and the check command's result in each worktree. Waits at most timeoutSeconds (≤ ${MAX_WAIT_SECONDS}); turns not over then keep running: call compare again with sessions to get the finished report. The sessions stay for diff_session, send_message and merge_session.`,
    input: z.strictObject({
      workspace: WorkspaceInput.optional().describe('absolute path of a directory of the repository; required unless sessions is given'),
      prompt: PromptInput.optional().describe('what to ask every agent; required unless sessions is given'),
      adapters: z
        .array(z.string().min(1).max(64))
        .max(8)
        .optional()
        .describe("adapters to compare (default: every enabled adapter; with models: the config's defaults.adapter, else droid)"),
      models: z.array(z.string().min(1).max(200)).max(8).optional().describe('models of one adapter to compare, one session each'),
      check: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('shell command run in each worktree after its turn, under the same sandbox (e.g. "npm test")'),
      checkTimeoutSeconds: z.number().min(1).max(3600).default(300).describe('longest each check may run'),
      base: z.string().min(1).max(256).optional().describe('the commit every worktree starts from (default: HEAD)'),
      sessions: z
        .array(SessionIdInput)
        .min(2)
        .max(8)
        .optional()
        .describe('report on the sessions an earlier compare started instead of starting new ones'),
      timeoutSeconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_SECONDS)
        .default(DEFAULT_COMPARE_WAIT_SECONDS)
        .describe(`longest wait for the turns in this call, in seconds (0–${MAX_WAIT_SECONDS}, default ${DEFAULT_COMPARE_WAIT_SECONDS})`),
    }),
    output: CompareOutSchema,
    readOnly: false,
    async run(orchestrator, args) {
      const timing = {
        timeoutMs: Math.round(args.timeoutSeconds * 1000),
        keepRunning: true,
        checkTimeoutMs: args.checkTimeoutSeconds * 1000,
      };
      let report: CompareReport;
      if (args.sessions) {
        report = await reportCompare(orchestrator, args.sessions, { check: args.check, ...timing });
      } else {
        if (!args.workspace || !args.prompt) throw usage('compare needs workspace and prompt (or sessions)');
        const adapters =
          args.adapters ??
          (args.models ? [await adapterOrDefault(orchestrator, undefined)] : (await orchestrator.info()).adapters.map((a) => a.name));
        if (args.models && adapters.length !== 1) throw usage('models compares the models of one adapter; give at most one adapter');
        const entries = args.models
          ? args.models.map((model) => ({ adapter: adapters[0]!, model }))
          : adapters.map((adapter) => ({ adapter }));
        report = await runCompare(orchestrator, {
          prompt: args.prompt,
          workspace: args.workspace,
          entries,
          check: args.check,
          base: args.base,
          ...timing,
        });
      }
      return { result: report, text: compareTable(report) };
    },
  }),
];

function usage(message: string): OneWorksError {
  return new OneWorksError(ERROR_CODES.USAGE, message);
}
