import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOrchestrator, type Orchestrator, type OrchestratorDeps, type OrchestratorLimits } from '../../core/orchestrator/index.js';
import { createFileStore, type FileStore } from '../../core/store/index.js';
import { type CliRig, type CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { realDroidRuntime } from '../support/real-droid-runtime.js';
import {
  lastUserText,
  SCRIPTED_MODEL_ID,
  type RecordedRequest,
  type ScriptedModel,
  type StaticStep,
  type Step,
} from '../support/scripted-model.js';

/**
 * An in-process orchestrator driving the REAL droid (ONE_WORKS_TEST_DROID) against a scripted
 * model, in a CliRig's state dir and approved workspace. Replies are chosen by the prompt of the
 * conversation's latest user message, so concurrent sessions each get their own script.
 */
export interface OrchestratorRig {
  rig: CliRig;
  model: ScriptedModel;
  store: FileStore;
  orchestrator: Orchestrator;
  /** What `orchestrator` was made with, to start another one over the same state (a restart). */
  deps: OrchestratorDeps;
  /** A workspace below the approved one. */
  dir(name: string): Promise<string>;
}

/** Routes a request to the reply for the first key its latest user text contains. */
export function byPrompt(replies: Record<string, (request: RecordedRequest) => StaticStep>, count = 40): Step[] {
  const route: Step = (request) => {
    const text = lastUserText(request);
    const key = Object.keys(replies).find((k) => text.includes(k));
    return key ? replies[key]!(request) : { text: `no script for: ${text.slice(0, 40)}` };
  };
  return Array.from({ length: count }, () => route);
}

export const executeStep = (id: string, command: string): StaticStep => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'harmless' } }],
});

export async function createOrchestratorRig(
  rigs: CliRigs,
  steps: Step[],
  limits: Partial<OrchestratorLimits> = {},
): Promise<OrchestratorRig> {
  const binary = process.env.ONE_WORKS_TEST_DROID;
  if (!binary)
    throw new Error('ONE_WORKS_TEST_DROID is not set: run this file in the vitest conformance project (its global setup installs droid)');
  const model = await rigs.model({ steps });
  const rig = await rigs.create({ baseUrl: model.baseUrl });
  const store = await createFileStore(rig.stateDir);
  const runtime = realDroidRuntime({
    store,
    stateDir: rig.stateDir,
    baseUrl: model.baseUrl,
    droid: { binaryPath: binary, version: '0.225.2', range: '>=0.225.0 <0.226.0', protocolVersion: '1.220.0' },
    config: { cli: { source: 'path', path: binary }, autonomy: 'high' },
    decide: () => Promise.resolve({ decision: 'allow', by: 'policy' }),
    runtime: { parentEnv: { PATH: process.env.PATH ?? '' }, runTimeoutMs: 120_000 },
  });
  const deps: OrchestratorDeps = {
    store,
    stateDir: rig.stateDir,
    limits: { maxConcurrentRuns: 4, maxQueuedTotal: 16, maxQueuedPerSession: 8, cancelGraceMs: 2_000, runTimeoutMs: 120_000, ...limits },
    approvedRoots: [rig.workspace],
    defaultsFor: () => ({ model: SCRIPTED_MODEL_ID, autonomy: 'high' }),
    runtimeFor: () => Promise.resolve(runtime),
    secrets: [RIG_API_KEY],
  };
  const orchestrator = await createOrchestrator(deps);
  rigs.defer(() => orchestrator.shutdown());
  return {
    rig,
    model,
    store,
    orchestrator,
    deps,
    dir: async (name) => {
      const dir = join(rig.workspace, name);
      await mkdir(dir, { recursive: true });
      return dir;
    },
  };
}

/** Polls `check` every 100 ms until it holds; the test timeout bounds it. */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(100);
}
