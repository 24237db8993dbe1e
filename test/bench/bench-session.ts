import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { droidAdapter } from '../../adapters/droid/index.js';
import { DroidConfigSchema } from '../../adapters/droid/config.js';
import { createPrepareServices } from '../../core/install/index.js';
import { createFileStore } from '../../core/store/index.js';
import { SessionRunner } from '../../core/session/index.js';

const CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));

/** A One Works session driven as a library (no CLI process), for per-turn overhead. */
export async function createBenchSession(
  dir: string,
  entry: unknown,
  modelId: string,
): Promise<{ runner: SessionRunner; close(): Promise<void> }> {
  const store = await createFileStore(`${dir}/state`);
  await store.acquireOwner({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() });
  const { mkdir } = await import('node:fs/promises');
  await mkdir(`${dir}/ws`, { recursive: true });
  const config = DroidConfigSchema.parse({ model: modelId, env: { FACTORY_AIRGAP_ENABLED: 'true' }, customModels: [entry] });
  const cli = await droidAdapter.prepare(config, { services: createPrepareServices(), cacheDir: CACHE, lock: new Map() });
  const runner = await SessionRunner.create(
    {
      store,
      stateDir: `${dir}/state`,
      adapter: droidAdapter as never,
      adapterConfig: config,
      cli,
      secrets: [],
      decide: async () => ({ decision: 'allow', by: 'policy' }),
      interruptGraceMs: 2000,
      runTimeoutMs: 60_000,
    },
    { workspace: `${dir}/ws`, model: modelId, autonomy: 'low' },
  );
  return {
    runner,
    async close() {
      await runner.close();
      await store.releaseOwner();
    },
  };
}
