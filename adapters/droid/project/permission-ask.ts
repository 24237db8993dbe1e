import type { PermissionAsk, PermissionChoice } from '../../../core/adapter.js';
import type { EventDraft } from '../../../core/events/index.js';
import { describePermissionTool, toolKind, toolLabel } from '../tool-labels.js';
import type { AskUserParams, RequestPermissionParams } from '../wire.js';
import { droidEventKeys } from './keys.js';

/** The name droid gives the tool behind `droid.ask_user`. */
const ASK_USER_TOOL = 'AskUser';

/** droid's answers that One Works gives: `proceed_once` for every allow, `cancel` for a deny. */
export const DROID_ANSWERS = { allow: 'proceed_once', deny: 'cancel' } as const;

/**
 * The One Works answers a droid ask can take: `allow-once` and `allow-session` when droid offers
 * `proceed_once` (both are answered with it: droid's own `proceed_always` would raise droid's
 * autonomy so that later calls skip the policy, so One Works records the session approval
 * itself), and always `deny` (`cancel`).
 */
export function droidChoices(nativeOptions: readonly string[]): PermissionChoice[] {
  return [...(nativeOptions.includes(DROID_ANSWERS.allow) ? (['allow-once', 'allow-session'] as const) : []), 'deny'];
}

/**
 * Normalises a `droid.request_permission` request (one entry per tool of the batch) into a
 * PermissionAsk for the policy engine, with the One Works answers droid's options allow.
 */
export function buildPermissionAsk(requestId: string, params: RequestPermissionParams, workspace: string): PermissionAsk {
  return {
    requestId,
    kind: 'tool',
    tools: params.toolUses.map((entry) => describePermissionTool(entry, workspace)),
    options: droidChoices(params.options.map((o) => o.value)),
  };
}

/** Normalises a `droid.ask_user` request: a question ask for the AskUser tool call it belongs to. */
export function buildQuestionAsk(requestId: string, params: AskUserParams, workspace: string): PermissionAsk {
  const input = { questions: params.questions };
  return {
    requestId,
    kind: 'question',
    tools: [
      {
        toolUseId: params.toolCallId,
        name: ASK_USER_TOOL,
        kind: toolKind(ASK_USER_TOOL),
        label: toolLabel(ASK_USER_TOOL, input, workspace),
        input,
      },
    ],
    options: [],
    questions: params.questions.map((q) => ({
      index: q.index,
      ...(q.topic ? { topic: q.topic } : {}),
      question: q.question,
      options: q.options ?? [],
      multiSelect: q.multiSelect === true,
    })),
  };
}

/** The `permission.requested` (tool asks) or `question.asked` (question asks) event of an ask. */
export function askedDraft(ask: PermissionAsk): EventDraft {
  if (ask.kind === 'question') {
    return {
      type: 'question.asked',
      key: droidEventKeys.questionAsked(ask.requestId),
      requestId: ask.requestId,
      questions: ask.questions ?? [],
    };
  }
  return {
    type: 'permission.requested',
    key: droidEventKeys.permissionRequested(ask.requestId),
    requestId: ask.requestId,
    tools: ask.tools.map((t) => ({ toolUseId: t.toolUseId, name: t.name, kind: toolKind(t.name), label: t.label })),
    options: ask.options,
  };
}
