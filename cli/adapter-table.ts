import type { Adapter } from '../core/adapter.js';
import { droidAcpAdapter, geminiAdapter } from '../adapters/acp/index.js';
import { claudeCodeAdapter } from '../adapters/claude-code/index.js';
import { codexAdapter } from '../adapters/codex/index.js';
import { droidAdapter } from '../adapters/droid/index.js';
import { processAdapter } from '../adapters/process-runner/index.js';

export { acpCommandAdapter } from '../adapters/acp/index.js';
export { harnessAdapter } from '../adapters/process-runner/index.js';

/**
 * The one place where adapters are wired into the runtime: a plain map. Loaded by
 * `createContext` only for commands that drive or inspect an agent CLI (run, serve, doctor, …):
 * the adapters bring their wire schemas, projections and process code with them, which
 * commands that only read the state (`sessions`, `events`) do not need to load.
 */
// biome-ignore lint/suspicious/noExplicitAny: adapters of different config types share one map; each parses its own block
export const ADAPTERS: Record<string, Adapter<any>> = {
  droid: droidAdapter,
  'claude-code': claudeCodeAdapter,
  codex: codexAdapter,
  process: processAdapter,
  'droid-acp': droidAcpAdapter,
  gemini: geminiAdapter,
};
