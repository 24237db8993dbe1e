import { ASK_TOOLS } from './tools-asks.js';
import { INFO_TOOLS } from './tools-info.js';
import { SESSION_TOOLS } from './tools-sessions.js';
import { TURN_TOOLS } from './tools-turns.js';
import { WORKTREE_TOOLS } from './tools-worktree.js';
import type { AnyMcpTool } from './tool.js';

// The order of tools/list and docs/TOOLS.md: orientation, then a session's life cycle.
const ORDER = [
  'list_workspaces',
  'models',
  'create_session',
  'send_message',
  'session_status',
  'read_session',
  'wait_for_sessions',
  'find_sessions',
  'update_session',
  'cancel_session',
  'list_asks',
  'answer_ask',
  'usage',
  'diff_session',
  'merge_session',
  'discard_session',
  'compare',
];

/** Every tool `one-works mcp` serves. */
export const MCP_TOOLS: readonly AnyMcpTool[] = [...INFO_TOOLS, ...TURN_TOOLS, ...SESSION_TOOLS, ...WORKTREE_TOOLS, ...ASK_TOOLS].sort(
  (a, b) => rank(a) - rank(b),
);

function rank(tool: AnyMcpTool): number {
  const index = ORDER.indexOf(tool.name);
  return index === -1 ? ORDER.length : index;
}
