import type { DroidNotificationType } from '../../adapters/droid/notifications.js';

/**
 * One minimal, valid notification per droid notification type (field names from
 * docs/droid-protocol.md §6). Typed as a Record over every known type, so adding a type to the
 * union without a sample here fails the typecheck.
 */
export const DROID_NOTIFICATION_SAMPLES: Record<DroidNotificationType, Record<string, unknown>> = {
  create_message: { message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'hi' }] } },
  assistant_text_delta: { messageId: 'm1', blockIndex: 0, textDelta: 'hi' },
  assistant_text_complete: { messageId: 'm1', blockIndex: 0 },
  thinking_text_delta: { messageId: 'm1', blockIndex: 0, textDelta: 'hmm' },
  thinking_text_complete: { messageId: 'm1', blockIndex: 0, durationMs: 2 },
  assistant_message_retracted: { messageId: 'm1' },
  tool_call: { toolUse: { type: 'tool_use', id: 't1', name: 'Execute', input: {} } },
  tool_execution_phase_changed: { toolUseId: 't1', toolName: 'Execute', phase: 'queued' },
  tool_progress_update: { toolUseId: 't1', toolName: 'Execute', update: { type: 'status', text: 'line1', timestamp: 1 } },
  tool_execution_heartbeat: { toolUseId: 't1', toolName: 'Execute' },
  tool_result: { toolUseId: 't1', messageId: 'r1', content: 'ok', isError: false },
  permission_resolved: { requestId: 'p1', toolUseIds: ['t1'], selectedOption: 'proceed_once' },
  droid_working_state_changed: { newState: 'thinking' },
  session_token_usage_changed: { sessionId: 's1', tokenUsage: { inputTokens: 5, outputTokens: 1 } },
  agent_turn_completed: { reason: 'completed', turnId: 'u1', tokenUsage: { inputTokens: 5, outputTokens: 1 } },
  settings_updated: { settings: { modelId: 'custom:Fake-0' } },
  session_title_updated: { title: 'A title', updateType: 'manual_rename' },
  mcp_status_changed: { servers: [{ name: 'echo', status: 'connected' }], summary: { total: 1 } },
  mcp_auth_required: { serverName: 'echo', authUrl: 'https://auth.example/x', message: 'log in', state: 'st' },
  mcp_auth_completed: { serverName: 'echo', outcome: 'success', message: 'ok' },
  error: { message: 'boom', errorType: 'Error', timestamp: '2026-01-01T00:00:00.000Z' },
  llm_retry: { attempt: 1, reason: 'rate_limited' },
  structured_output: { messageId: 'm1', structuredOutput: { answer: 42 } },
  session_compacted: { summaryId: 'sum1', removedCount: 3, visibleBoundaryMessageId: null },
  hook_execution_started: { hookId: 'h1', hookEventName: 'PreToolUse', hookCommands: [{ command: 'x' }], hookToolCallId: 't1' },
  hook_execution_completed: { hookId: 'h1', hookEventName: 'PreToolUse', hookStatus: 'completed', hookResults: [] },
  queued_messages_discarded: { text: 'later', requestId: 'f9' },
  child_session_available: { childSessionId: 'c1', toolUseId: 't1', description: 'sub task', timestamp: 1 },
  session_working_directory_changed: { cwd: '/work/other' },
  loop_state_changed: { loopState: { loopId: 'l1', status: 'running' } },
  mission_state_changed: { state: {} },
  mission_features_changed: { features: [] },
  mission_progress_entry: { entry: {} },
  mission_heartbeat: {},
  mission_worker_started: { workerSessionId: 'w1' },
  mission_worker_completed: { workerSessionId: 'w1' },
  mission_v2_snapshot_changed: { snapshot: {} },
};

/** Wraps a sample into `droid.session_notification` params. */
export function notificationParams(type: DroidNotificationType, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { sessionId: 's1', notification: { type, ...DROID_NOTIFICATION_SAMPLES[type], ...overrides } };
}
