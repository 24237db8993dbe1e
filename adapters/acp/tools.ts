import { isAbsolute, relative, resolve } from 'node:path';
import type { PermissionAsk } from '../../core/adapter.js';
import type { ToolKind } from '../../core/events/index.js';

/**
 * What One Works knows about one ACP tool call, merged from every sighting: a `tool_call`
 * update, later `tool_call_update`s, or a `session/request_permission` whose tool call was never
 * announced (Gemini CLI's first notice of a call is the permission request).
 */
export interface AcpToolFacts {
  toolCallId: string;
  title?: string;
  kind?: string;
  status?: string;
  rawInput?: unknown;
  locations: string[];
}

/** ACP tool kinds (`read`, `edit`, `delete`, `move`, `search`, `execute`, `think`, `fetch`, …) → One Works kinds. */
export function acpToolKind(kind: string | undefined): ToolKind {
  switch (kind) {
    case 'read':
      return 'read';
    case 'edit':
    case 'delete':
    case 'move':
      return 'edit';
    case 'search':
      return 'search';
    case 'execute':
      return 'execute';
    case 'fetch':
      return 'fetch';
    default:
      return 'other';
  }
}

/** Merges a (partial) sighting into the facts known about a tool call. */
export function mergeToolFacts(known: AcpToolFacts | undefined, update: Record<string, unknown>): AcpToolFacts {
  const facts: AcpToolFacts = known
    ? { ...known, locations: [...known.locations] }
    : { toolCallId: String(update.toolCallId), locations: [] };
  if (typeof update.title === 'string') facts.title = update.title;
  if (typeof update.kind === 'string') facts.kind = update.kind;
  if (typeof update.status === 'string') facts.status = update.status;
  if (update.rawInput !== undefined && update.rawInput !== null) facts.rawInput = update.rawInput;
  if (Array.isArray(update.locations)) {
    for (const location of update.locations) {
      const path = (location as { path?: unknown } | null)?.path;
      if (typeof path === 'string' && !facts.locations.includes(path)) facts.locations.push(path);
    }
  }
  return facts;
}

/**
 * How an agent names the command of an execute call: `rawInput.command` (droid), or, for an agent
 * whose execute titles are the full command and that sends no raw input (Gemini CLI 0.61.0: its
 * shell tool's display title is `params.command`), the title.
 */
export type CommandSource = 'rawInput' | 'rawInputOrTitle';

/** The full command of an execute call, when the agent tells it (see CommandSource). */
export function acpCommand(facts: AcpToolFacts, source: CommandSource = 'rawInput'): string | undefined {
  const command = (facts.rawInput as { command?: unknown } | undefined)?.command;
  if (typeof command === 'string') return command;
  if (source === 'rawInputOrTitle' && acpToolKind(facts.kind) === 'execute' && facts.title) return facts.title;
  return undefined;
}

/** A short label: `<kind>: <command or first path or title>`. */
export function acpToolLabel(facts: AcpToolFacts, workspace: string, source: CommandSource = 'rawInput'): string {
  const kind = acpToolKind(facts.kind);
  const target = (kind === 'execute' ? acpCommand(facts, source) : undefined) ?? shortPath(facts.locations[0], workspace) ?? facts.title;
  return target ? `${kind}: ${target}` : kind;
}

/** The tool as the permission policy sees it. */
export function acpPermissionTool(
  facts: AcpToolFacts,
  workspace: string,
  source: CommandSource = 'rawInput',
): PermissionAsk['tools'][number] {
  const kind = acpToolKind(facts.kind);
  const command = acpCommand(facts, source);
  const paths = facts.locations.map((path) => (isAbsolute(path) ? path : resolve(workspace, path)));
  const risk = (facts.rawInput as { riskLevel?: unknown } | undefined)?.riskLevel;
  return {
    toolUseId: facts.toolCallId,
    name: facts.kind ?? 'other',
    kind,
    label: acpToolLabel(facts, workspace, source),
    ...(command !== undefined ? { command } : {}),
    ...(paths.length > 0 ? { paths } : {}),
    ...(risk === 'low' || risk === 'medium' || risk === 'high' ? { impact: risk } : {}),
    input: facts.rawInput ?? {},
  };
}

function shortPath(path: string | undefined, workspace: string): string | undefined {
  if (path === undefined) return undefined;
  if (!isAbsolute(path)) return path;
  const rel = relative(workspace, path);
  return rel !== '' && !rel.startsWith('..') ? rel : path;
}
