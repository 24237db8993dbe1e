import { isAbsolute, resolve } from 'node:path';
import type { PermissionAsk } from '../../core/adapter.js';
import type { ToolKind } from '../../core/events/index.js';
import type { DroidPermissionToolUse } from './wire.js';

/**
 * Tool kinds and short human labels for droid's tools (`execute: npm test`, `read: …/src/a.ts`),
 * and the facts a permission policy needs from a `droid.request_permission` entry. Pure string
 * work: paths are never resolved against the file system.
 */

const KINDS: Readonly<Record<string, ToolKind>> = {
  Execute: 'execute',
  Read: 'read',
  Edit: 'edit',
  Create: 'edit',
  ApplyPatch: 'edit',
  Grep: 'search',
  Glob: 'search',
  LS: 'search',
  FetchUrl: 'fetch',
  WebSearch: 'fetch',
};

/** Maximum length of the target part of a label, in characters. */
export const MAX_LABEL_TARGET_CHARS = 80;

/** The kind of a droid tool by its native name; unknown tools (MCP `server___tool`, AskUser…) are `other`. */
export function toolKind(name: string): ToolKind {
  return Object.hasOwn(KINDS, name) ? KINDS[name]! : 'other';
}

/**
 * A one-line label: `<kind>: <target>`, or the bare kind when the input names no target yet (the
 * first `tool_call` sighting has an empty input). `other` tools keep their native name.
 */
export function toolLabel(name: string, input: unknown, workspace?: string): string {
  const kind = toolKind(name);
  const fields = isRecord(input) ? input : {};
  const target = labelTarget(kind, name, fields, workspace);
  return target ? `${kind}: ${target}` : kind;
}

function labelTarget(kind: ToolKind, name: string, input: Record<string, unknown>, workspace: string | undefined): string {
  switch (kind) {
    case 'execute':
      return oneLine(text(input.command));
    case 'read':
    case 'edit': {
      const path = editPaths(input)[0];
      return path ? shortenPath(path, workspace) : '';
    }
    case 'search': {
      const pattern = oneLine(text(input.pattern) || firstText(input.patterns) || text(input.query));
      const dir = text(input.directory_path) || text(input.path) || text(input.folder) || text(input.directory);
      const where = dir ? shortenPath(dir, workspace) : '';
      if (pattern && where) return cap(`${pattern} in ${where}`);
      return pattern || where;
    }
    case 'fetch':
      return oneLine(text(input.url) || text(input.query));
    case 'other':
      return name;
  }
}

/**
 * Shortens a path for display: relative to `workspace` when inside it (the workspace itself is
 * `.`), then cut to its last two segments with a `…/` prefix when it has more.
 */
export function shortenPath(path: string, workspace?: string): string {
  let shown = path;
  if (workspace) {
    const root = workspace.endsWith('/') ? workspace.slice(0, -1) : workspace;
    if (path === root) return '.';
    if (path.startsWith(`${root}/`)) shown = path.slice(root.length + 1);
  }
  const segments = shown.split('/').filter((s) => s.length > 0);
  if (segments.length > 2) shown = `…/${segments.slice(-2).join('/')}`;
  return cap(shown);
}

/** The full command of an Execute call, or of an `exec` permission entry. */
export function toolCommand(input: unknown): string | undefined {
  return isRecord(input) && typeof input.command === 'string' ? input.command : undefined;
}

// Edit-like tools name their target `file_path`; ApplyPatch may carry only the patch text.
function editPaths(input: Record<string, unknown>): string[] {
  const direct = text(input.file_path) || text(input.filePath) || text(input.path);
  if (direct) return [direct];
  const patch = text(input.patch) || text(input.input);
  return [...patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1]!.trim());
}

/**
 * The policy-relevant facts of one `droid.request_permission` entry: command (exec), absolute
 * target paths (edit/create/apply_patch, resolved against `workspace` when relative), droid's
 * own impact level (exec, mcp_tool), plus kind and label.
 */
export function describePermissionTool(entry: DroidPermissionToolUse, workspace: string): PermissionAsk['tools'][number] {
  const { toolUse, details } = entry;
  const input = toolUse.input ?? {};
  const described: PermissionAsk['tools'][number] = {
    toolUseId: toolUse.id,
    name: toolUse.name,
    kind: toolKind(toolUse.name),
    label: toolLabel(toolUse.name, input, workspace),
    input,
  };
  const command = details?.fullCommand ?? toolCommand(input);
  if (command !== undefined && (details?.type === 'exec' || toolKind(toolUse.name) === 'execute')) described.command = command;
  const paths = permissionPaths(entry);
  if (paths.length > 0) described.paths = paths.map((p) => (isAbsolute(p) ? p : resolve(workspace, p)));
  const impact = details?.impactLevel;
  if (impact === 'low' || impact === 'medium' || impact === 'high') described.impact = impact;
  return described;
}

function permissionPaths(entry: DroidPermissionToolUse): string[] {
  const { details, toolUse } = entry;
  const fromDetails: string[] = [];
  if (details?.filePath) fromDetails.push(details.filePath);
  for (const file of details?.files ?? []) {
    if (typeof file === 'string') fromDetails.push(file);
    else if (isRecord(file) && typeof file.filePath === 'string') fromDetails.push(file.filePath);
  }
  if (fromDetails.length > 0) return [...new Set(fromDetails)];
  const editLike = details?.type === 'edit' || details?.type === 'create' || details?.type === 'apply_patch';
  return editLike || toolKind(toolUse.name) === 'edit' ? editPaths(isRecord(toolUse.input) ? toolUse.input : {}) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function firstText(value: unknown): string {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').join(', ') : '';
}

// First non-empty line, trimmed and capped; a cut-off rest is marked with "…".
function oneLine(value: string): string {
  // One line (the usual command): no split.
  if (!value.includes('\n')) {
    const line = value.trim();
    return line.length === 0 ? '' : cap(line);
  }
  const lines = value
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  if (lines.length === 0) return '';
  return cap(lines.length > 1 ? `${lines[0]} …` : lines[0]!);
}

function cap(value: string): string {
  return value.length > MAX_LABEL_TARGET_CHARS ? `${value.slice(0, MAX_LABEL_TARGET_CHARS - 1)}…` : value;
}
