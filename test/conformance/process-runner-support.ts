import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliRigs, CliRig } from '../support/one-works-cli.js';
import { RIG_API_KEY } from '../support/one-works-cli.js';
import type { ScriptedModel, Step } from '../support/scripted-model.js';

/** The reference runner shipped in the repo. */
export const REFERENCE_RUNNER = fileURLToPath(new URL('../../adapters/process-runner/reference/openai-runner.mjs', import.meta.url));

/** The harness name every process-runner test declares. */
export const HARNESS = 'ref';

/**
 * A rig whose `adapters.process` declares the reference runner as `ref` (node + openai-runner.mjs)
 * against a scripted chat-completions model, with RIG_API_KEY as the provider key, merged with
 * `harness` (shallow); the process block also gets `policy` when given, the rig `orchestrator` overrides.
 */
export async function referenceRig(
  rigs: CliRigs,
  steps: Step[],
  harness: Record<string, unknown> = {},
  policy?: Record<string, unknown>,
  orchestrator?: Record<string, unknown>,
): Promise<{ rig: CliRig; model: ScriptedModel }> {
  const model = await rigs.model({ steps, strict: true });
  const rig = await rigs.create({
    baseUrl: 'http://127.0.0.1:9',
    ...(orchestrator ? { orchestrator } : {}),
    process: {
      ...(policy ? { policy } : {}),
      harnesses: {
        [HARNESS]: {
          command: process.execPath,
          args: [REFERENCE_RUNNER],
          model: 'scripted',
          provider: { baseUrl: model.baseUrl, apiKey: RIG_API_KEY },
          ...harness,
        },
      },
    },
  });
  return { rig, model };
}

/** Every file below `dir` (recursively) whose bytes contain `needle`. */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const bytes = await readFile(file).catch(() => Buffer.alloc(0));
    if (bytes.includes(needle)) found.push(file);
  }
  return found;
}
