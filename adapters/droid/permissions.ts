import { permissionChoice, type SessionIO } from '../../core/adapter.js';
import type { HandlerContext } from '../../core/protocol/index.js';
import { askedDraft, buildPermissionAsk, buildQuestionAsk, DROID_ANSWERS, droidEventKeys } from './project.js';
import { AskUserParamsSchema, RequestPermissionParamsSchema } from './wire.js';

/**
 * Answers `droid.request_permission`: the ask goes through One Works' permission decider
 * (policy, then a person when one is present), the request and the decision are both events,
 * and the One Works answer maps to droid's: `allow-once` and `allow-session` → `proceed_once`
 * (never droid's persistent `proceed_always`, which would widen droid's own autonomy), `deny`
 * → `cancel`. An allow droid did not offer a proceed option for is answered `cancel`.
 */
export async function answerPermission(params: unknown, ctx: HandlerContext, io: SessionIO, workspace: string): Promise<unknown> {
  const ask = buildPermissionAsk(String(ctx.id), RequestPermissionParamsSchema.parse(params), workspace);
  io.emit(askedDraft(ask));
  const decision = await io.decide(ask);
  const wanted = permissionChoice(decision);
  const choice = ask.options.includes(wanted) ? wanted : 'deny';
  const option = choice === 'deny' ? DROID_ANSWERS.deny : DROID_ANSWERS.allow;
  io.emit({
    type: 'permission.decided',
    key: droidEventKeys.permissionDecided(ask.requestId),
    requestId: ask.requestId,
    decision: choice === 'deny' ? 'deny' : 'allow',
    option: choice,
    nativeOption: option,
    by: decision.by,
    ...(decision.reason ? { reason: decision.reason } : {}),
    ...(decision.channel ? { channel: decision.channel } : {}),
  });
  return { selectedOption: option };
}

/**
 * Answers `droid.ask_user`: questions always escalate; without a person they are declined and
 * recorded, never guessed.
 */
export async function answerAskUser(params: unknown, ctx: HandlerContext, io: SessionIO, workspace: string): Promise<unknown> {
  const ask = buildQuestionAsk(String(ctx.id), AskUserParamsSchema.parse(params), workspace);
  io.emit(askedDraft(ask));
  const decision = await io.decide(ask);
  const answered = decision.decision === 'allow' && (decision.answers?.length ?? 0) > 0;
  // droid's ask_user answer is `{ index, question, answer }` per question (droid-protocol.md §5.2).
  const answers = answered ? decision.answers!.map(({ index, question, answer }) => ({ index, question, answer })) : [];
  io.emit({
    type: 'question.answered',
    key: droidEventKeys.questionAnswered(ask.requestId),
    requestId: ask.requestId,
    cancelled: !answered,
    answers,
    by: decision.by === 'human' ? 'human' : 'policy',
    ...(decision.channel ? { channel: decision.channel } : {}),
  });
  return answered ? { answers } : { cancelled: true, answers: [] };
}
