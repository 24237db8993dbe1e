import type { Adapter, ResolvedCli } from '../../core/adapter.js';
import type { SessionRuntime } from '../../core/session/index.js';
import type { Store } from '../../core/store/index.js';
import { droidAdapter, DroidConfigSchema } from '../../adapters/droid/index.js';
import { RIG_API_KEY } from './one-works-cli.js';
import { droidCustomModel, SCRIPTED_MODEL_ID } from './scripted-model.js';

/** The real droid binary a runtime drives, and the protocol it is pinned to. */
export interface RealDroid {
  binaryPath: string;
  version: string;
  range: string;
  /** The protocol version the runtime expects (a mismatch fails the session before any prompt). */
  protocolVersion: string;
}

export interface RealDroidRuntimeOptions {
  store: Store;
  stateDir: string;
  /** The scripted model's base URL, declared to droid as the BYOK model custom:Scripted-0. */
  baseUrl: string;
  droid: RealDroid;
  /** Merged over the droid config block (model SCRIPTED_MODEL_ID, airgapped, the scripted model). */
  config?: Record<string, unknown>;
  /** Default: every permission ask is denied by policy (none is expected). */
  decide?: SessionRuntime['decide'];
  /** Merged over the runtime (grace periods, timeouts, parent env). */
  runtime?: Partial<SessionRuntime>;
}

/**
 * A SessionRuntime that drives the real droid against the scripted model, for conformance tests
 * that use SessionRunner or the orchestrator directly (no CLI). The BYOK key is RIG_API_KEY and is
 * registered as a secret.
 */
export function realDroidRuntime(options: RealDroidRuntimeOptions): SessionRuntime {
  const { droid } = options;
  const cli: ResolvedCli = {
    source: 'path',
    binaryPath: droid.binaryPath,
    version: droid.version,
    range: droid.range,
    expected: { facts: { apiVersion: '1.0.0', protocolVersion: droid.protocolVersion }, qualifiedBy: 'table' },
  };
  const adapterConfig = DroidConfigSchema.parse({
    model: SCRIPTED_MODEL_ID,
    env: { FACTORY_AIRGAP_ENABLED: 'true' },
    customModels: [droidCustomModel(options.baseUrl, { apiKey: RIG_API_KEY }).entry],
    ...options.config,
  });
  return {
    store: options.store,
    stateDir: options.stateDir,
    adapter: droidAdapter as Adapter<unknown>,
    adapterConfig,
    cli,
    secrets: [RIG_API_KEY],
    decide: options.decide ?? (async () => ({ decision: 'deny', by: 'policy', reason: 'no permission expected in this test' })),
    interruptGraceMs: 2_000,
    runTimeoutMs: 60_000,
    ...options.runtime,
  };
}
