export {
  RuntimeEventSchema,
  parseRuntimeEvent,
  isValidRuntimeEvent,
  isValidRecordedEvent,
  EventDraftSchema,
  UsageSchema,
  TurnOutcomeSchema,
  TurnStatusSchema,
  ToolKindSchema,
  UNREPORTED_USAGE,
  AnswerChannelSchema,
} from './schema.js';
export type {
  RuntimeEvent,
  RuntimeEventType,
  EventDraft,
  Usage,
  TurnOutcome,
  TurnStatus,
  ToolKind,
  AnswerChannel,
} from './schema.js';
