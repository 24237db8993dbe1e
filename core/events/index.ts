export {
  RuntimeEventSchema,
  EventDraftSchema,
  UsageSchema,
  TurnOutcomeSchema,
  TurnStatusSchema,
  ToolKindSchema,
  UNREPORTED_USAGE,
} from './schema.js';
export type {
  RuntimeEvent,
  RuntimeEventType,
  EventDraft,
  Usage,
  TurnOutcome,
  TurnStatus,
  ToolKind,
} from './schema.js';
