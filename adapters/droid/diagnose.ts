import type { DiagnosticNote } from '../../core/adapter.js';
import { customModelId, type DroidConfig } from './config.js';

/** How long `doctor` waits for a BYOK endpoint to answer at all. */
const ENDPOINT_TIMEOUT_MS = 3_000;

/**
 * Findings about the config alone (no contact): a default model `custom:…` that none of
 * `customModels` declares. Other model ids need the live catalog (doctor checks those).
 */
export function droidConfigNotes(config: DroidConfig): DiagnosticNote[] {
  const model = config.model;
  if (model === undefined || !model.startsWith('custom:')) return [];
  const declared = config.customModels.map((_, index) => customModelId(config.customModels, index));
  if (declared.includes(model)) return [];
  return [
    {
      name: 'droid model',
      ok: true,
      warn: true,
      config: true,
      detail: `adapters.droid.model ${model} is not among the declared BYOK models (${declared.length > 0 ? declared.join(', ') : 'customModels is empty'})`,
    },
  ];
}

/**
 * Contacts each BYOK endpoint once (`GET <baseUrl>/models`, no key sent): any HTTP answer, even
 * 401 or 404, means something listens; a refused connection or silence is a warning.
 */
export async function droidEndpointNotes(config: DroidConfig): Promise<DiagnosticNote[]> {
  const notes: DiagnosticNote[] = [];
  for (const [index, entry] of config.customModels.entries()) {
    const id = customModelId(config.customModels, index);
    const url = `${entry.baseUrl.replace(/\/+$/, '')}/models`;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(ENDPOINT_TIMEOUT_MS), redirect: 'manual' });
      await response.body?.cancel();
      notes.push({ name: `droid BYOK ${id}`, ok: true, detail: `${entry.baseUrl} answers (HTTP ${response.status})` });
    } catch (error) {
      const inner = (error as { cause?: { code?: string; message?: string } }).cause;
      const cause = (error as Error).name === 'TimeoutError' ? 'TimeoutError' : (inner?.code ?? inner?.message ?? (error as Error).message);
      notes.push({
        name: `droid BYOK ${id}`,
        ok: true,
        warn: true,
        detail: `${entry.baseUrl} does not answer (${cause === 'TimeoutError' ? `no answer within ${ENDPOINT_TIMEOUT_MS} ms` : cause}); turns with ${id} will fail`,
      });
    }
  }
  return notes;
}
