import { resolve } from 'node:path';
import { z } from 'zod';
import {
  DEFAULT_READ_EVENTS,
  LABEL_PATTERN,
  MAX_LABEL_LENGTH,
  MAX_READ_BYTES,
  MAX_READ_EVENTS,
  MAX_TITLE_LENGTH,
  type SessionSummary,
} from '../../core/orchestrator/index.js';
import { SessionStatusSchema, type SessionStatus } from '../../core/store/records.js';
import { canonicalWorkspace, isWithin } from '../../core/workspace/index.js';
import { LabelsInput, SessionIdInput, TitleInput } from './inputs.js';
import { MIN_READ_BYTES } from './limits.js';
import { maskValues, scrubEvents } from './native-ids.js';
import { EventOutSchema, RunViewOutSchema, SessionSummaryOutSchema } from './schemas.js';
import { detailText, summaryText } from './text.js';
import { defineTool, type AnyMcpTool } from './tool.js';

/** Tools that look at sessions and change their metadata. */
export const SESSION_TOOLS: readonly AnyMcpTool[] = [
  defineTool({
    name: 'session_status',
    description:
      "A session's summary: state (working, idle, needs_attention, failed, closed), queue depth, latest run and why it needs attention.",
    input: z.strictObject({ session: SessionIdInput }),
    output: SessionSummaryOutSchema,
    readOnly: true,
    async run(orchestrator, { session }) {
      const summary = await orchestrator.status(session);
      return { result: summary, text: summaryText(summary) };
    },
  }),
  defineTool({
    name: 'read_session',
    description:
      'A session\'s latest run (prompt, status, assistant text, usage, effective settings), its most recent recorded events (bounded in count and bytes, oldest first, no deltas), needs-attention reasons and unanswered questions. Long strings are cut to fit, ending with "… [N chars cut]" (8 KiB per event field, 32 KiB for the run\'s prompt and text).',
    input: z.strictObject({
      session: SessionIdInput,
      maxEvents: z
        .number()
        .int()
        .min(1)
        .max(MAX_READ_EVENTS)
        .optional()
        .describe(`at most this many recent events (1–${MAX_READ_EVENTS}, default ${DEFAULT_READ_EVENTS})`),
      maxBytes: z
        .number()
        .int()
        .min(MIN_READ_BYTES)
        .max(MAX_READ_BYTES)
        .optional()
        .describe(
          `at most this many bytes of JSON for the whole result (${MIN_READ_BYTES}–${MAX_READ_BYTES}, default ${MAX_READ_BYTES}); long strings are cut first, then older events are dropped`,
        ),
    }),
    output: z.object({
      summary: SessionSummaryOutSchema,
      latestRun: RunViewOutSchema.optional(),
      events: z.array(EventOutSchema).describe('recorded events (types as in core/events), without native ids'),
      eventsTruncated: z.boolean().describe('true when older events were left out'),
      pendingQuestions: z.array(z.string()).describe('questions the agent asked that nobody answered'),
    }),
    readOnly: true,
    async run(orchestrator, { session, maxEvents, maxBytes }) {
      const detail = await orchestrator.readSession({ sessionId: session, maxEvents, maxBytes });
      const { events, removed } = scrubEvents(detail.events as unknown as Record<string, unknown>[]);
      const result = maskValues({ ...detail, events: events as z.input<typeof EventOutSchema>[] }, removed);
      return { result, text: maskValues(detailText(result), removed) };
    },
  }),
  defineTool({
    name: 'find_sessions',
    description:
      'List sessions, newest activity first, filtered by title substring (case-insensitive), label, workspace (the directory or inside it) and state. Archived sessions are left out unless includeArchived. Sessions whose record on the host is malformed are listed apart under corrupt (unfiltered), with what is wrong: they cannot be read or continued until the host owner fixes them.',
    input: z.strictObject({
      title: z.string().min(1).max(MAX_TITLE_LENGTH).optional().describe('substring of the title, case-insensitive'),
      label: z.string().min(1).max(MAX_LABEL_LENGTH).regex(LABEL_PATTERN).optional().describe('a label the session carries'),
      workspace: z.string().min(1).max(4096).optional().describe('absolute path: sessions in this directory or below it'),
      state: SessionStatusSchema.optional().describe('only sessions in this state'),
      includeArchived: z.boolean().default(false).describe('include archived sessions (default false)'),
      limit: z.number().int().min(1).max(500).default(100).describe('at most this many sessions (default 100)'),
    }),
    output: z.object({
      sessions: z.array(SessionSummaryOutSchema),
      more: z.boolean().describe('true when more sessions matched than limit'),
      corrupt: z
        .array(
          z.object({
            sessionId: z.string(),
            reason: z.string().describe('what is wrong with its record'),
          }),
        )
        .describe('sessions whose record is malformed: left out of every other call until the host owner fixes or moves the file'),
    }),
    readOnly: true,
    async run(orchestrator, filter) {
      // Session workspaces are canonical: compare with the filter's canonical form (symlinks resolved).
      const workspace =
        filter.workspace === undefined ? undefined : await canonicalWorkspace(filter.workspace).catch(() => resolve(filter.workspace!));
      const all = (await orchestrator.list())
        .filter((s) => matches(s, { ...filter, workspace }))
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
      const sessions = all.slice(0, filter.limit);
      const corrupt = (await orchestrator.corruptSessions()).map(({ sessionId, reason }) => ({ sessionId, reason }));
      const lines = [
        ...(sessions.length === 0 ? ['no matching sessions'] : sessions.map(summaryText)),
        ...corrupt.map((c) => `${c.sessionId}: corrupt record (${c.reason})`),
      ];
      return { result: { sessions, more: all.length > sessions.length, corrupt }, text: lines.join('\n') };
    },
  }),
  defineTool({
    name: 'update_session',
    description: "Change a session's title, labels (the whole set is replaced) or archived flag. Fields left out stay as they are.",
    input: z
      .strictObject({
        session: SessionIdInput,
        title: TitleInput.optional(),
        labels: LabelsInput.optional(),
        archived: z
          .boolean()
          .optional()
          .describe('archive (true) or unarchive (false); archived sessions are hidden from find_sessions by default'),
      })
      .refine(
        (u) => u.title !== undefined || u.labels !== undefined || u.archived !== undefined,
        'give at least one of title, labels, archived',
      ),
    output: SessionSummaryOutSchema,
    readOnly: false,
    async run(orchestrator, { session, ...changes }) {
      const summary = await orchestrator.updateSession({ sessionId: session, ...changes });
      return { result: summary, text: summaryText(summary) };
    },
  }),
];

interface Filter {
  title?: string | undefined;
  label?: string | undefined;
  workspace?: string | undefined;
  state?: SessionStatus | undefined;
  includeArchived: boolean;
}

function matches(s: SessionSummary, f: Filter): boolean {
  if (!f.includeArchived && s.archived) return false;
  if (f.title !== undefined && !(s.title ?? '').toLowerCase().includes(f.title.toLowerCase())) return false;
  if (f.label !== undefined && !(s.labels ?? []).includes(f.label)) return false;
  if (f.state !== undefined && s.state !== f.state) return false;
  return f.workspace === undefined || isWithin(s.workspace, f.workspace);
}
