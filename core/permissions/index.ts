export { PermissionPolicySchema, decidePermission } from './policy.js';
export type { PermissionPolicy, PermissionPolicyInput, PolicyResult } from './policy.js';
export { rememberKey } from './tool-verdict.js';
export type { AskedTool, PolicyContext, PolicyVerdict, ToolVerdict } from './tool-verdict.js';
export { createPermissionDecider, declineEscalator } from './escalation.js';
export type {
  DeciderResult,
  DecisionRecord,
  EscalationAnswer,
  Escalator,
  PermissionDeciderOptions,
} from './escalation.js';
export { describeLimitation, limitationsInEffect, rulesInEffect } from './limitations.js';
export type { LimitationInEffect } from './limitations.js';
export {
  AskAnswerSchema,
  AskBoard,
  AskQuestionSchema,
  AskChoiceSchema,
  askQuestionShape,
  OpenAskSchema,
  answerText,
  askToolShape,
  describeChannel,
} from './ask-board.js';
export type { AnsweredAsk, AskAnswer, AskChoice, OpenAsk } from './ask-board.js';
export { mergePolicies } from './merge-policies.js';
