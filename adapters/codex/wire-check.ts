import type { z } from 'zod';
import type { InitializeParams } from './generated/InitializeParams.js';
import type { InitializeResponse } from './generated/InitializeResponse.js';
import type { AgentMessageDeltaNotification } from './generated/v2/AgentMessageDeltaNotification.js';
import type { CommandExecutionOutputDeltaNotification } from './generated/v2/CommandExecutionOutputDeltaNotification.js';
import type { CommandExecutionRequestApprovalParams } from './generated/v2/CommandExecutionRequestApprovalParams.js';
import type { CommandExecutionRequestApprovalResponse } from './generated/v2/CommandExecutionRequestApprovalResponse.js';
import type { ErrorNotification } from './generated/v2/ErrorNotification.js';
import type { FileChangeRequestApprovalParams } from './generated/v2/FileChangeRequestApprovalParams.js';
import type { FileChangeRequestApprovalResponse } from './generated/v2/FileChangeRequestApprovalResponse.js';
import type { ItemCompletedNotification } from './generated/v2/ItemCompletedNotification.js';
import type { ItemStartedNotification } from './generated/v2/ItemStartedNotification.js';
import type { ModelListParams } from './generated/v2/ModelListParams.js';
import type { ModelListResponse } from './generated/v2/ModelListResponse.js';
import type { PermissionsRequestApprovalParams } from './generated/v2/PermissionsRequestApprovalParams.js';
import type { ThreadLoadedListParams } from './generated/v2/ThreadLoadedListParams.js';
import type { ThreadLoadedListResponse } from './generated/v2/ThreadLoadedListResponse.js';
import type { ThreadResumeParams } from './generated/v2/ThreadResumeParams.js';
import type { ThreadResumeResponse } from './generated/v2/ThreadResumeResponse.js';
import type { ThreadStartParams } from './generated/v2/ThreadStartParams.js';
import type { ThreadStartResponse } from './generated/v2/ThreadStartResponse.js';
import type { ThreadTokenUsageUpdatedNotification } from './generated/v2/ThreadTokenUsageUpdatedNotification.js';
import type { ToolRequestUserInputParams } from './generated/v2/ToolRequestUserInputParams.js';
import type { ToolRequestUserInputResponse } from './generated/v2/ToolRequestUserInputResponse.js';
import type { TurnCompletedNotification } from './generated/v2/TurnCompletedNotification.js';
import type { TurnInterruptParams } from './generated/v2/TurnInterruptParams.js';
import type { TurnStartedNotification } from './generated/v2/TurnStartedNotification.js';
import type { TurnStartParams } from './generated/v2/TurnStartParams.js';
import type { TurnStartResponse } from './generated/v2/TurnStartResponse.js';
import type { TurnSteerParams } from './generated/v2/TurnSteerParams.js';
import type { WarningNotification } from './generated/v2/WarningNotification.js';
import type { ApprovalDecision } from './wire.js';
import type * as W from './wire.js';

/**
 * Compile-time agreement between the adapter's zod schemas (wire.ts) and the types the pinned
 * binary generated (adapters/codex/generated, `codex app-server generate-ts`). Nothing here runs.
 *
 * - What Codex sends: every value of the generated type must be accepted by our schema's input
 *   (`Accepts<Schema, Generated>`), so a field we read that a new version renames or retypes fails `tsc`.
 * - What we send: every value our schema produces must be a value of the generated params type
 *   (`Sends<Schema, Generated>`), so we never send a field or value the binary does not declare.
 */
type Accepts<S extends z.ZodType, G> = [G] extends [z.input<S>] ? true : false;
type Sends<S extends z.ZodType, G> = [z.output<S>] extends [G] ? true : false;

export type WireAgreement = [
  Sends<typeof W.InitializeParamsSchema, InitializeParams>,
  Accepts<typeof W.InitializeResponseSchema, InitializeResponse>,
  Sends<typeof W.ThreadStartParamsSchema, ThreadStartParams>,
  Accepts<typeof W.ThreadStartResponseSchema, ThreadStartResponse>,
  Sends<typeof W.ThreadResumeParamsSchema, ThreadResumeParams>,
  Accepts<typeof W.ThreadResumeResponseSchema, ThreadResumeResponse>,
  Sends<typeof W.TurnStartParamsSchema, TurnStartParams>,
  Accepts<typeof W.TurnStartResponseSchema, TurnStartResponse>,
  Sends<typeof W.TurnInterruptParamsSchema, TurnInterruptParams>,
  Sends<typeof W.TurnSteerParamsSchema, TurnSteerParams>,
  Sends<typeof W.ModelListParamsSchema, ModelListParams>,
  Accepts<typeof W.ModelListResponseSchema, ModelListResponse>,
  Sends<typeof W.ThreadLoadedListParamsSchema, ThreadLoadedListParams>,
  Accepts<typeof W.ThreadLoadedListResponseSchema, ThreadLoadedListResponse>,
  Accepts<typeof W.TurnNotificationSchema, TurnStartedNotification>,
  Accepts<typeof W.TurnNotificationSchema, TurnCompletedNotification>,
  Accepts<typeof W.ItemNotificationSchema, ItemStartedNotification>,
  Accepts<typeof W.ItemNotificationSchema, ItemCompletedNotification>,
  Accepts<typeof W.DeltaNotificationSchema, AgentMessageDeltaNotification>,
  Accepts<typeof W.DeltaNotificationSchema, CommandExecutionOutputDeltaNotification>,
  Accepts<typeof W.TokenUsageNotificationSchema, ThreadTokenUsageUpdatedNotification>,
  Accepts<typeof W.ErrorNotificationSchema, ErrorNotification>,
  Accepts<typeof W.WarningNotificationSchema, WarningNotification>,
  Accepts<typeof W.CommandApprovalParamsSchema, CommandExecutionRequestApprovalParams>,
  Accepts<typeof W.FileChangeApprovalParamsSchema, FileChangeRequestApprovalParams>,
  Accepts<typeof W.PermissionsApprovalParamsSchema, PermissionsRequestApprovalParams>,
  Accepts<typeof W.UserInputParamsSchema, ToolRequestUserInputParams>,
  // Our answers: every decision we send is one the binary declares for both approval kinds.
  [{ decision: ApprovalDecision }] extends [CommandExecutionRequestApprovalResponse] ? true : false,
  [{ decision: ApprovalDecision }] extends [FileChangeRequestApprovalResponse] ? true : false,
  [{ answers: Record<string, { answers: string[] }> }] extends [ToolRequestUserInputResponse] ? true : false,
];

/** Fails to compile when any entry above is `false`. */
export const WIRE_AGREEMENT: false extends WireAgreement[number] ? never : true = true;
