import type { PermissionAsk } from '../../../core/adapter.js';
import type { AskedTool, PolicyContext } from '../../../core/permissions/index.js';
import { PermissionPolicySchema } from '../../../core/permissions/index.js';
import type { PermissionPolicyInput } from '../../../core/permissions/index.js';

// Small builders shared by the permission tests.

export const WORKSPACE = '/ws/project';

let nextId = 0;

/** A tool of an ask; `kind` defaults to execute. */
export function tool(fields: Partial<AskedTool> & { kind: string }): AskedTool {
  nextId += 1;
  return { toolUseId: `call_${nextId}`, name: `Tool${nextId}`, label: 'a tool', input: {}, ...fields };
}

export const exec = (command: string): AskedTool => tool({ kind: 'execute', name: 'Execute', command });
export const edit = (...paths: string[]): AskedTool => tool({ kind: 'edit', name: 'Edit', paths });

/** A `tool` ask carrying the given tools. */
export function ask(...tools: AskedTool[]): PermissionAsk {
  return { requestId: 'req-1', kind: 'tool', tools, options: ['allow-once', 'allow-session', 'deny'] };
}

/** A `question` ask. */
export function question(): PermissionAsk {
  return {
    requestId: 'req-q',
    kind: 'question',
    tools: [tool({ kind: 'other', name: 'AskUser' })],
    options: [],
    questions: [{ index: 1, question: 'Which file?', options: [], multiSelect: false }],
  };
}

/** A policy context with the given policy (parsed, so defaults apply) and autonomy. */
export function context(
  autonomy: PolicyContext['autonomy'],
  policy: PermissionPolicyInput = {},
  remembered?: ReadonlySet<string>,
): PolicyContext {
  return { policy: PermissionPolicySchema.parse(policy), autonomy, workspace: WORKSPACE, remembered };
}
