import path from 'node:path';
import type { PermissionAsk } from '../../core/adapter.js';
import type { ToolKind } from '../../core/events/index.js';
import type { ThreadItem } from './wire.js';

/** One Works tool kinds of Codex's thread item types (0.171.0); the rest are `other`. */
const KINDS: Readonly<Record<string, ToolKind>> = {
  commandExecution: 'execute',
  fileChange: 'edit',
  webSearch: 'fetch',
  imageView: 'read',
  mcpToolCall: 'other',
  dynamicToolCall: 'other',
};

/** The thread item types that are tool spans. */
export function isToolItem(type: string): boolean {
  return Object.hasOwn(KINDS, type);
}

export function codexToolKind(type: string): ToolKind {
  return Object.hasOwn(KINDS, type) ? KINDS[type]! : 'other';
}

/** A tool name for a thread item: the MCP or dynamic tool's own name, else the item type. */
export function codexToolName(item: ThreadItem): string {
  if (item.type === 'mcpToolCall' && item.server && typeof item.tool === 'string') return `${item.server}.${item.tool}`;
  if (item.type === 'dynamicToolCall' && typeof item.tool === 'string') return item.tool;
  return item.type;
}

// `/bin/bash -lc '<script>'` (how 0.171.0 reports a model's `exec_command`) → `<script>`; a script
// that needs no quoting comes bare (`/bin/bash -lc ls`).
const SHELL_WRAPPER = /^(?:\S*\/)?(?:ba|z)?sh\s+-l?c\s+(?:'((?:[^']|'\\'')*)'|([^\s'"\\]+))$/s;

/** The command a person (and the policy) should judge: the script inside Codex's shell wrapper. */
export function unwrapShellCommand(command: string): string {
  const match = SHELL_WRAPPER.exec(command.trim());
  if (match?.[1] !== undefined) return match[1].replaceAll("'\\''", "'");
  return match?.[2] ?? command;
}

const MAX_TARGET = 80;

/** `<kind>: <target>` (paths relative to the workspace), or the bare kind. */
export function codexToolLabel(item: ThreadItem, workspace: string): string {
  const kind = codexToolKind(item.type);
  let target = '';
  if (item.type === 'commandExecution' && item.command) target = unwrapShellCommand(item.command).split('\n')[0] ?? '';
  else if (item.type === 'fileChange') target = (item.changes ?? []).map((change) => relative(change.path, workspace)).join(', ');
  else if (kind === 'other') target = codexToolName(item);
  if (target.length > MAX_TARGET) target = `${target.slice(0, MAX_TARGET - 1)}…`;
  return target ? `${kind}: ${target}` : kind;
}

function relative(file: string, workspace: string): string {
  if (!path.isAbsolute(file)) return file;
  const rel = path.relative(workspace, file);
  return rel === '' ? '.' : rel.startsWith('..') ? file : rel;
}

/** The policy facts of a command approval: the unwrapped command. */
export function describeCommandTool(itemId: string, command: string, input: unknown, workspace: string): PermissionAsk['tools'][number] {
  const item: ThreadItem = { type: 'commandExecution', id: itemId, command };
  return {
    toolUseId: itemId,
    name: 'commandExecution',
    kind: 'execute',
    label: codexToolLabel(item, workspace),
    command: unwrapShellCommand(command),
    input,
  };
}

/** The policy facts of a file-change approval: absolute target paths (from the item Codex announced before asking). */
export function describeFileChangeTool(
  itemId: string,
  item: ThreadItem | undefined,
  input: unknown,
  workspace: string,
): PermissionAsk['tools'][number] {
  const paths = (item?.changes ?? []).map((change) => path.resolve(workspace, change.path));
  const known: ThreadItem = item ?? { type: 'fileChange', id: itemId };
  return { toolUseId: itemId, name: 'fileChange', kind: 'edit', label: codexToolLabel(known, workspace), paths, input };
}
