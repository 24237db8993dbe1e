import path from 'node:path';
import type { Autonomy, PermissionAsk } from '../adapter.js';
import { findDenyMatch, findUnallowedSegment, normaliseCommand, redirectTargets } from './command-match.js';
import type { PermissionPolicy } from './policy.js';

/**
 * The per-tool rules of the permission matrix. Path checks are lexical (`..` is resolved, links
 * are not): the workspace and boundary roots are expected to be canonical already, and
 * confinement of what a tool really touches is the sandbox's job, not this engine's.
 */

/** One tool of a permission ask. */
export type AskedTool = PermissionAsk['tools'][number];

export type PolicyVerdict = 'allow' | 'deny' | 'escalate';

/** The engine's verdict on one tool, with a reason a person can read. */
export interface ToolVerdict {
  toolUseId: string;
  verdict: PolicyVerdict;
  reason: string;
}

/** What the engine decides against. `workspace` is a canonical absolute path. */
export interface PolicyContext {
  policy: PermissionPolicy;
  autonomy: Autonomy;
  workspace: string;
  /** Keys from `rememberKey` that a person approved for this session. */
  remembered?: ReadonlySet<string>;
}

const AUTONOMY_RANK: Record<Autonomy, number> = { off: 0, low: 1, medium: 2, high: 3 };
// Redirect targets that write nowhere a person would care about.
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/**
 * The key under which a person's "for this session" approval of a tool is remembered, e.g.
 * `execute:npm test`, `edit:/ws/a.ts`, `fetch:<tool name>`; undefined for tools that are never
 * remembered (read-only tools, unknown kinds, tools without a command or paths).
 */
export function rememberKey(tool: AskedTool): string | undefined {
  switch (tool.kind) {
    case 'execute':
      return tool.command === undefined || normaliseCommand(tool.command) === '' ? undefined : `execute:${normaliseCommand(tool.command)}`;
    case 'edit':
      return tool.paths === undefined || tool.paths.length === 0 || !tool.paths.every(path.isAbsolute)
        ? undefined
        : `edit:${[...new Set(tool.paths.map((p) => path.resolve(p)))].sort().join('\n')}`;
    case 'fetch':
    case 'other':
      return `${tool.kind}:${tool.name}`;
    default:
      return undefined;
  }
}

/** Decides one tool of a `tool` ask. Deny rules win over remembered approvals. */
export function decideTool(tool: AskedTool, ctx: PolicyContext): ToolVerdict {
  const verdict = (v: PolicyVerdict, reason: string): ToolVerdict => ({ toolUseId: tool.toolUseId, verdict: v, reason });
  if (tool.kind === 'read' || tool.kind === 'search') return verdict('allow', `${tool.name} (${tool.kind}) is read-only`);

  const denied = (tool.paths ?? []).find((p) => deniedRoot(p, ctx) !== undefined);
  if (denied !== undefined) {
    return verdict('deny', `${tool.name} touches ${denied}, under denied path ${deniedRoot(denied, ctx)}`);
  }
  const key = rememberKey(tool);
  const remembered = key !== undefined && ctx.remembered?.has(key) === true;

  switch (tool.kind) {
    case 'execute':
      return decideExecute(tool, ctx, remembered, verdict);
    case 'edit': {
      if (tool.paths === undefined || tool.paths.length === 0) return verdict('escalate', `${tool.name} (edit) names no target paths`);
      if (remembered) return verdict('allow', `${tool.name} of ${tool.paths.join(', ')} was approved for this session`);
      const outside = tool.paths.find((p) => !insideBoundary(p, ctx));
      if (outside !== undefined) {
        const where = path.isAbsolute(outside) ? 'outside the workspace and write boundary' : 'which is not an absolute path';
        return verdict('escalate', `${tool.name} writes ${outside}, ${where}`);
      }
      return atLeast(ctx.autonomy, 'medium')
        ? verdict('allow', `${tool.name} writes inside the workspace (autonomy ${ctx.autonomy})`)
        : verdict('escalate', `${tool.name} writes inside the workspace, which needs autonomy medium (is ${ctx.autonomy})`);
    }
    case 'fetch':
      if (remembered) return verdict('allow', `${tool.name} (fetch) was approved for this session`);
      return atLeast(ctx.autonomy, 'high')
        ? verdict('allow', `${tool.name} (fetch) is allowed at autonomy high`)
        : verdict('escalate', `${tool.name} (fetch) needs autonomy high (is ${ctx.autonomy})`);
    case 'other':
      return remembered
        ? verdict('allow', `${tool.name} was approved for this session`)
        : verdict('escalate', `${tool.name} is a tool the policy has no rule for`);
    default:
      return verdict('escalate', `${tool.name} has an unknown kind '${tool.kind}'`);
  }
}

// The execute rules: deny list, denied redirect targets, remembered, allowlist, autonomy high.
function decideExecute(
  tool: AskedTool,
  ctx: PolicyContext,
  remembered: boolean,
  verdict: (v: PolicyVerdict, reason: string) => ToolVerdict,
): ToolVerdict {
  const command = tool.command === undefined ? '' : normaliseCommand(tool.command);
  if (command === '') return verdict('escalate', `${tool.name} (execute) names no command`);
  const deny = findDenyMatch(command, ctx.policy.deny);
  if (deny !== undefined) return verdict('deny', `command '${deny.segment}' matches deny entry '${deny.prefix}'`);

  const { targets, changesDirectory } = redirectTargets(command);
  const written = targets.map((target) => resolveTarget(target, ctx.workspace, changesDirectory));
  const deniedWrite = written.find((p) => p !== undefined && deniedRoot(p, ctx) !== undefined);
  if (deniedWrite !== undefined) {
    return verdict('deny', `command '${command}' writes ${deniedWrite}, under denied path ${deniedRoot(deniedWrite, ctx)}`);
  }
  if (remembered) return verdict('allow', `command '${command}' was approved for this session`);

  const unallowed = findUnallowedSegment(command, ctx.policy.allow);
  const escapes = written.some((p) => p === undefined || (!HARMLESS_TARGETS.has(p) && !insideBoundary(p, ctx)));
  if (unallowed === undefined && !escapes) return verdict('allow', `command '${command}' is on the allowlist`);
  if (atLeast(ctx.autonomy, 'high')) return verdict('allow', `command '${command}' is allowed at autonomy high`);
  const why =
    unallowed !== undefined
      ? `'${unallowed}' is not on the allowlist`
      : 'it redirects output outside the workspace (or to a path that cannot be resolved)';
  return verdict('escalate', `command '${command}' needs autonomy high (is ${ctx.autonomy}): ${why}`);
}

// A redirect target as an absolute path, or undefined when it cannot be known lexically.
function resolveTarget(target: string, workspace: string, changesDirectory: boolean): string | undefined {
  if (target === '' || /[$~`*?{]/.test(target)) return undefined;
  if (path.isAbsolute(target)) return path.resolve(target);
  return changesDirectory ? undefined : path.resolve(workspace, target);
}

// Autonomy levels are ordered off < low < medium < high.
function atLeast(autonomy: Autonomy, wanted: Autonomy): boolean {
  return AUTONOMY_RANK[autonomy] >= AUTONOMY_RANK[wanted];
}

// True when `target` is `root` or below it (never a sibling that merely shares a prefix).
function isWithin(target: string, root: string): boolean {
  const relative = path.relative(path.resolve(root), path.resolve(target));
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

// The denied root a path falls under; relative paths are checked as if under the workspace.
function deniedRoot(target: string, ctx: PolicyContext): string | undefined {
  const absolute = path.resolve(ctx.workspace, target);
  return ctx.policy.denyPaths.find((root) => isWithin(absolute, root));
}

// Inside the workspace or an extra write root; relative paths are never inside.
function insideBoundary(target: string, ctx: PolicyContext): boolean {
  if (!path.isAbsolute(target)) return false;
  return [ctx.workspace, ...ctx.policy.writeBoundary].some((root) => isWithin(target, root));
}
