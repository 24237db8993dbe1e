import { z } from 'zod';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { MAX_WAIT_SECONDS } from './limits.js';
import {
  AdapterInput,
  adapterOrDefault,
  LabelsInput,
  PromptInput,
  RequestKeyInput,
  SessionIdInput,
  SettingsInput,
  TitleInput,
  WorkspaceInput,
} from './inputs.js';
import { SessionSummaryOutSchema, TurnHandleOutSchema, WaitOutSchema } from './schemas.js';
import { handleText, summaryText } from './text.js';
import { defineTool, type AnyMcpTool } from './tool.js';

/** Tools that start, steer, wait for and stop turns. */
export const TURN_TOOLS: readonly AnyMcpTool[] = [
  defineTool({
    name: 'create_session',
    description:
      'Start a new agent session in a workspace with a first prompt. Returns at once with the session id and the first run (queued or running) and its effective settings; use wait_for_sessions and read_session for the outcome.',
    input: z.strictObject({
      requestKey: RequestKeyInput,
      workspace: WorkspaceInput,
      prompt: PromptInput,
      adapter: AdapterInput,
      ...SettingsInput,
      title: TitleInput.optional(),
      labels: LabelsInput.optional(),
      worktree: z
        .boolean()
        .optional()
        .describe(
          "true: run in a new git worktree of the workspace's repository on branch ow/<session id> (see diff_session, merge_session); false: in the workspace itself; left out: as the workspace's approved root (workspaces.isolation) says",
        ),
      base: z.string().min(1).max(256).optional().describe('with worktree: the commit to start from (default: HEAD)'),
    }),
    output: TurnHandleOutSchema,
    readOnly: false,
    async run(orchestrator, { worktree, base, adapter, ...args }) {
      if (base !== undefined && worktree !== true) throw new OneWorksError(ERROR_CODES.USAGE, 'base only applies with worktree: true');
      const isolation =
        worktree === true ? { worktree: base === undefined ? {} : { base } } : worktree === false ? { worktree: false as const } : {};
      const handle = await orchestrator.createSession({ ...args, adapter: await adapterOrDefault(orchestrator, adapter), ...isolation });
      return { result: handle, text: handleText(handle) };
    },
  }),
  defineTool({
    name: 'send_message',
    description:
      "Queue the next turn of a session (runs after its current turn), or steer with interrupt: true (drops its queued turns, interrupts the live one, then runs this; an agent that can be steered, e.g. Codex, takes the message into its live turn instead when the settings are that turn's, and the live run's handle is returned). Settings left out are inherited from the session's last accepted turn.",
    input: z.strictObject({
      session: SessionIdInput,
      prompt: PromptInput,
      interrupt: z.boolean().optional().describe('steer: supersede queued turns and interrupt the live one first'),
      ...SettingsInput,
      requestKey: RequestKeyInput,
    }),
    output: TurnHandleOutSchema,
    readOnly: false,
    async run(orchestrator, { session, ...rest }) {
      const handle = await orchestrator.sendMessage({ sessionId: session, ...rest });
      return { result: handle, text: handleText(handle) };
    },
  }),
  defineTool({
    name: 'fork_session',
    description:
      "Start a new session in the same workspace (same adapter, labels and session policy) whose first turn carries another session's history up to a run as a bounded, redacted transcript, followed by the prompt (a process runner's fork instead starts from a verified copy of the source's runner checkpoint, and its first turn is the prompt alone). No native fork of the agent is claimed otherwise and no worktree is made. Returns at once like create_session.",
    input: z.strictObject({
      requestKey: RequestKeyInput,
      session: SessionIdInput,
      runId: z.string().min(1).max(64).optional().describe('the last run whose history the fork carries (default: all of it)'),
      prompt: PromptInput.optional(),
      ...SettingsInput,
      title: TitleInput.optional(),
    }),
    output: TurnHandleOutSchema,
    readOnly: false,
    async run(orchestrator, { session, prompt, ...rest }) {
      const handle = await orchestrator.forkSession({ sessionId: session, prompt: prompt ?? '', ...rest });
      return { result: handle, text: handleText(handle) };
    },
  }),
  defineTool({
    name: 'wait_for_sessions',
    description: `Wait until none of the sessions is working (idle, needs_attention, failed and closed all count as settled), for at most ${MAX_WAIT_SECONDS} s a call. A timeout is not an error: timedOut is true and pending lists the sessions still working; call again to keep waiting. Many clients abandon a request after 60 s, so ask for 50 s or less.`,
    input: z.strictObject({
      sessions: z.array(SessionIdInput).min(1).max(100).describe('the session ids to wait for'),
      timeoutSeconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_SECONDS)
        .default(30)
        .describe(`longest wait in seconds (0–${MAX_WAIT_SECONDS}, default 30)`),
    }),
    output: WaitOutSchema,
    readOnly: true,
    async run(orchestrator, { sessions, timeoutSeconds }) {
      const result = await orchestrator.wait(sessions, Math.round(timeoutSeconds * 1000));
      const head = result.timedOut ? `timed out; still working: ${result.pending.map((s) => s.sessionId).join(', ')}` : 'all settled';
      return { result, text: [head, ...result.settled.map(summaryText), ...result.pending.map(summaryText)].join('\n') };
    },
  }),
  defineTool({
    name: 'cancel_session',
    description:
      "Cancel a session's live turn (interrupt, then stop the agent after a grace period) and its queued turns. Returns the session's summary.",
    input: z.strictObject({ session: SessionIdInput }),
    output: SessionSummaryOutSchema,
    readOnly: false,
    async run(orchestrator, { session }) {
      const summary = await orchestrator.cancel(session);
      return { result: summary, text: summaryText(summary) };
    },
  }),
];
