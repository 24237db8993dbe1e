/** The app-server methods One Works uses (Codex 0.171.0, `codex app-server generate-ts`). */
export const CODEX_METHODS = {
  initialize: 'initialize',
  initialized: 'initialized',
  threadStart: 'thread/start',
  threadResume: 'thread/resume',
  turnStart: 'turn/start',
  turnInterrupt: 'turn/interrupt',
  turnSteer: 'turn/steer',
  modelList: 'model/list',
  threadLoadedList: 'thread/loaded/list',
} as const;

/** Notifications the projection reads; every other one becomes a `native` event or is ignored as noise. */
export const CODEX_NOTIFICATIONS = {
  turnStarted: 'turn/started',
  turnCompleted: 'turn/completed',
  itemStarted: 'item/started',
  itemCompleted: 'item/completed',
  agentMessageDelta: 'item/agentMessage/delta',
  commandOutputDelta: 'item/commandExecution/outputDelta',
  tokenUsageUpdated: 'thread/tokenUsage/updated',
  error: 'error',
  warning: 'warning',
} as const;

/** Server → client requests of 0.171.0 (generated ServerRequest). */
export const CODEX_SERVER_REQUESTS = {
  commandApproval: 'item/commandExecution/requestApproval',
  fileChangeApproval: 'item/fileChange/requestApproval',
  permissionsApproval: 'item/permissions/requestApproval',
  userInput: 'item/tool/requestUserInput',
  elicitation: 'mcpServer/elicitation/request',
  dynamicToolCall: 'item/tool/call',
  legacyExecApproval: 'execCommandApproval',
  legacyPatchApproval: 'applyPatchApproval',
} as const;

/** Notifications of status and account facts with no One Works meaning (not even `native`). */
export const CODEX_QUIET_NOTIFICATIONS: ReadonlySet<string> = new Set([
  'thread/started',
  'thread/status/changed',
  'account/rateLimits/updated',
  'remoteControl/status/changed',
  'serverRequest/resolved',
  'item/reasoning/summaryTextDelta',
  'item/reasoning/summaryPartAdded',
  'item/reasoning/textDelta',
  'turn/diff/updated',
  'turn/plan/updated',
  'mcpServer/startupStatus/updated',
  'skills/changed',
]);
