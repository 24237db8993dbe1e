import path from 'node:path';
import type { PermissionAsk } from '../../core/adapter.js';
import type { ToolKind } from '../../core/events/index.js';

/** One Works tool kinds of Claude Code's built-in tools (2.1.333); MCP tools (`mcp__*`) and the rest are `other`. */
const KINDS: Readonly<Record<string, ToolKind>> = {
  Bash: 'execute',
  Write: 'edit',
  Edit: 'edit',
  MultiEdit: 'edit',
  NotebookEdit: 'edit',
  Read: 'read',
  Grep: 'search',
  Glob: 'search',
  LS: 'search',
  WebFetch: 'fetch',
  WebSearch: 'fetch',
};

export function claudeToolKind(name: string): ToolKind {
  return Object.hasOwn(KINDS, name) ? KINDS[name]! : 'other';
}

const MAX_TARGET = 80;

/** `<kind>: <target>` (paths relative to the workspace), or the bare kind; `other` tools show their name. */
export function claudeToolLabel(name: string, input: unknown, workspace: string): string {
  const kind = claudeToolKind(name);
  const fields = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  let target = '';
  switch (kind) {
    case 'execute':
      target = str(fields.command).split('\n')[0] ?? '';
      break;
    case 'read':
    case 'edit': {
      const file = str(fields.file_path) || str(fields.notebook_path);
      target = file ? relative(file, workspace) : '';
      break;
    }
    case 'search':
      target = [str(fields.pattern), str(fields.path) ? `in ${relative(str(fields.path), workspace)}` : ''].filter(Boolean).join(' ');
      break;
    case 'fetch':
      target = str(fields.url) || str(fields.query);
      break;
    default:
      target = name;
  }
  if (target.length > MAX_TARGET) target = `${target.slice(0, MAX_TARGET - 1)}…`;
  return target ? `${kind}: ${target}` : kind;
}

function relative(file: string, workspace: string): string {
  if (!path.isAbsolute(file)) return file;
  const rel = path.relative(workspace, file);
  return rel === '' ? '.' : rel.startsWith('..') ? file : rel;
}

/** The policy facts of one `can_use_tool`: command for Bash, absolute target paths for edits. */
export function describeClaudeTool(
  name: string,
  input: Record<string, unknown>,
  toolUseId: string,
  workspace: string,
): PermissionAsk['tools'][number] {
  const kind = claudeToolKind(name);
  const file =
    typeof input.file_path === 'string' ? input.file_path : typeof input.notebook_path === 'string' ? input.notebook_path : undefined;
  return {
    toolUseId,
    name,
    kind,
    label: claudeToolLabel(name, input, workspace),
    ...(kind === 'execute' && typeof input.command === 'string' ? { command: input.command } : {}),
    ...((kind === 'edit' || kind === 'read') && file ? { paths: [path.resolve(workspace, file)] } : {}),
    input,
  };
}
