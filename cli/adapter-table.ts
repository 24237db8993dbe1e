import type { Adapter } from '../core/adapter.js';

// biome-ignore lint/suspicious/noExplicitAny: adapters of different config types share one table; each parses its own block
type AnyAdapter = Adapter<any>;

/**
 * The one place where adapters are wired into the runtime: each adapter's module, by adapter
 * name, imported only when that adapter is first used (a dynamic import each, so the build
 * splits every adapter into chunks of its own). An adapter brings its wire schemas, projections,
 * process code and SDK (the ACP SDK for the ACP adapters) with it: `run` loads only the adapter
 * of its session, the orchestrator only the adapters of the sessions it runs, and commands that
 * only read the state (`sessions`, `events`) none. The configuration never needs them:
 * cli/context.ts validates every block with the adapters' config schemas alone.
 */
export const ADAPTER_LOADERS: Record<string, () => Promise<AnyAdapter>> = {
  droid: async () => (await import('../adapters/droid/index.js')).droidAdapter,
  'claude-code': async () => (await import('../adapters/claude-code/index.js')).claudeCodeAdapter,
  codex: async () => (await import('../adapters/codex/index.js')).codexAdapter,
  process: async () => (await import('../adapters/process-runner/index.js')).processAdapter,
  'droid-acp': async () => (await import('../adapters/acp/index.js')).droidAcpAdapter,
  gemini: async () => (await import('../adapters/acp/index.js')).geminiAdapter,
};

/** The adapter `process:<harness>` (the process runner's module, loaded on first use). */
export async function loadHarnessAdapter(harness: string): Promise<AnyAdapter> {
  return (await import('../adapters/process-runner/index.js')).harnessAdapter(harness);
}

/** The adapter `acp:<agent>` of an ACP agent declared by command (the ACP module, loaded on first use). */
export async function loadAcpCommandAdapter(agent: string): Promise<AnyAdapter> {
  return (await import('../adapters/acp/index.js')).acpCommandAdapter(agent) as AnyAdapter;
}

/** Every adapter module at once, for commands that look at all adapters (doctor, adapters, models …). */
export async function loadAllAdapters(): Promise<{
  adapters: Map<string, AnyAdapter>;
  harnessAdapter: (harness: string) => AnyAdapter;
  acpCommandAdapter: (agent: string) => AnyAdapter;
}> {
  const [entries, processRunner, acp] = await Promise.all([
    Promise.all(Object.entries(ADAPTER_LOADERS).map(async ([name, load]) => [name, await load()] as const)),
    import('../adapters/process-runner/index.js'),
    import('../adapters/acp/index.js'),
  ]);
  return {
    adapters: new Map(entries),
    harnessAdapter: processRunner.harnessAdapter,
    acpCommandAdapter: (agent) => acp.acpCommandAdapter(agent) as AnyAdapter,
  };
}
