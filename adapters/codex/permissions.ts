import {
  type AskQuestion,
  type PermissionAsk,
  type PermissionChoice,
  type PermissionDecision,
  permissionChoice,
  type SessionIO,
} from '../../core/adapter.js';
import { describeCommandTool, describeFileChangeTool } from './tools.js';
import {
  type ApprovalDecision,
  CommandApprovalParamsSchema,
  FileChangeApprovalParamsSchema,
  PermissionsApprovalParamsSchema,
  type ThreadItem,
  UserInputParamsSchema,
} from './wire.js';

/** What an approval handler needs from the session. */
export interface ApprovalContext {
  io: SessionIO;
  workspace: string;
  /** The item Codex announced with `item/started` (approvals name only its id). */
  item(itemId: string): ThreadItem | undefined;
}

/**
 * The answer choices One Works offers for a Codex approval. Both allows are answered `accept`
 * (this call only): One Works remembers a person's "for this session" itself and asks its policy
 * again each time, so deny rules still win; `acceptForSession` would let Codex skip the policy.
 */
const OPTIONS: PermissionChoice[] = ['allow-once', 'allow-session', 'deny'];

// A request id that stays unique across processes (Codex numbers its requests from 0 in each).
const requestIdOf = (turnId: string, itemId: string, approvalId?: string | null): string =>
  `${turnId}:${itemId}${approvalId ? `:${approvalId}` : ''}`;

/** `item/commandExecution/requestApproval` → the policy → `{ decision: accept | decline }`. */
export async function answerCommandApproval(params: unknown, ctx: ApprovalContext): Promise<{ decision: ApprovalDecision }> {
  const ask = CommandApprovalParamsSchema.parse(params);
  const command = ask.command ?? ctx.item(ask.itemId)?.command ?? '';
  const approvalId = typeof ask.approvalId === 'string' ? ask.approvalId : undefined;
  const tool = describeCommandTool(ask.itemId, command, params, ctx.workspace);
  const decision = await decideTool(ctx.io, requestIdOf(ask.turnId, ask.itemId, approvalId), tool);
  return { decision };
}

/** `item/fileChange/requestApproval` → the policy (with the paths the announced item changes) → accept | decline. */
export async function answerFileChangeApproval(params: unknown, ctx: ApprovalContext): Promise<{ decision: ApprovalDecision }> {
  const ask = FileChangeApprovalParamsSchema.parse(params);
  const tool = describeFileChangeTool(ask.itemId, ctx.item(ask.itemId), params, ctx.workspace);
  const decision = await decideTool(ctx.io, requestIdOf(ask.turnId, ask.itemId), tool);
  return { decision };
}

/**
 * `item/permissions/requestApproval` (more file-system or network access than the sandbox gives):
 * the policy decides an `other` tool; an allow grants what was asked for this turn, a deny nothing.
 */
export async function answerPermissionsApproval(params: unknown, ctx: ApprovalContext): Promise<unknown> {
  const ask = PermissionsApprovalParamsSchema.parse(params);
  const tool: PermissionAsk['tools'][number] = {
    toolUseId: ask.itemId,
    name: 'permissions',
    kind: 'other',
    label: `other: more permissions${ask.reason ? ` (${ask.reason})` : ''}`,
    input: params,
  };
  const decision = await decideTool(ctx.io, requestIdOf(ask.turnId, `${ask.itemId}:permissions`), tool);
  return decision === 'accept' ? { permissions: ask.permissions ?? {}, scope: 'turn' } : { permissions: {}, scope: 'turn' };
}

/** `item/tool/requestUserInput`: questions go to a person; without one they are declined (no answers), never guessed. */
export async function answerUserInput(params: unknown, ctx: ApprovalContext): Promise<{ answers: Record<string, { answers: string[] }> }> {
  const ask = UserInputParamsSchema.parse(params);
  const requestId = requestIdOf(ask.turnId, `${ask.itemId}:input`);
  const questions: AskQuestion[] = ask.questions.map((q, i) => ({
    index: i + 1,
    topic: q.header,
    question: q.question,
    options: (q.options ?? []).map((option) => option.label),
    multiSelect: false,
  }));
  ctx.io.emit({ type: 'question.asked', key: `question.asked:${requestId}`, requestId, questions });
  const decision = await decide(ctx.io, { requestId, kind: 'question', tools: [], options: [], questions });
  const answered = decision.decision === 'allow' && (decision.answers?.length ?? 0) > 0;
  const answers: Record<string, { answers: string[] }> = {};
  if (answered) {
    for (const answer of decision.answers!) {
      const question = ask.questions[answer.index - 1];
      if (question) answers[question.id] = { answers: [answer.answer] };
    }
  }
  ctx.io.emit({
    type: 'question.answered',
    key: `question.answered:${requestId}`,
    requestId,
    cancelled: !answered,
    answers: answered ? decision.answers! : [],
    by: decision.by,
    ...(decision.channel ? { channel: decision.channel } : {}),
  });
  return { answers };
}

// One tool ask through the decider, recorded as permission.requested and permission.decided.
async function decideTool(io: SessionIO, requestId: string, tool: PermissionAsk['tools'][number]): Promise<ApprovalDecision> {
  io.emit({
    type: 'permission.requested',
    key: `permission.requested:${requestId}`,
    requestId,
    tools: [{ toolUseId: tool.toolUseId, name: tool.name, kind: tool.kind as never, label: tool.label }],
    options: OPTIONS,
  });
  const decision = await decide(io, { requestId, kind: 'tool', tools: [tool], options: OPTIONS });
  const answer: ApprovalDecision = decision.decision === 'allow' ? 'accept' : 'decline';
  io.emit({
    type: 'permission.decided',
    key: `permission.decided:${requestId}`,
    requestId,
    decision: decision.decision,
    option: permissionChoice(decision),
    nativeOption: answer,
    by: decision.by,
    ...(decision.reason ? { reason: decision.reason } : {}),
    ...(decision.channel ? { channel: decision.channel } : {}),
  });
  return answer;
}

// The decider fails closed: a failure to decide is a deny.
function decide(io: SessionIO, ask: PermissionAsk): Promise<PermissionDecision> {
  return io
    .decide(ask)
    .catch((error: Error): PermissionDecision => ({ decision: 'deny', by: 'policy', reason: `decision failed: ${error.message}` }));
}
