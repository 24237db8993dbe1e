import type { SeedFile } from '../../core/adapter.js';
import type { DroidConfig } from './config.js';

/**
 * The isolated `.factory/settings.json` of one session, composed from the YAML: BYOK
 * `customModels`, the model/effort/autonomy defaults, and `configContent` merged over them.
 * Cloud session sync stays off. The user's real `~/.factory` is never read: this file is the
 * only settings source droid finds in the session HOME.
 */
export interface ComposedSettings {
  files: SeedFile[];
  /** Secrets that appear in the files (BYOK api keys, extra headers). */
  secrets: string[];
}

export function composeDroidSettings(config: DroidConfig): ComposedSettings {
  const secrets: string[] = [];
  const customModels = config.customModels.map((m) => {
    if (m.apiKey) secrets.push(m.apiKey);
    for (const v of Object.values(m.extraHeaders ?? {})) secrets.push(v);
    return dropUndefined({ ...m });
  });
  const base: Record<string, unknown> = {
    cloudSessionSync: false,
    // droid 0.225.2 loads `<workspace>/.factory/mcp.json` implicitly and starts its servers; a
    // workspace is not trusted to run processes that way. An enabled policy with an allowlist of
    // only the servers One Works declares blocks project servers (`blockedByPolicy: true`).
    mcpPolicy: { enabled: true, allowlist: [] },
    ...(customModels.length > 0 ? { customModels } : {}),
    sessionDefaultSettings: dropUndefined({
      model: config.model === 'inherit' ? undefined : config.model,
      reasoningEffort: config.effort,
      autonomyLevel: config.autonomy,
      interactionMode: 'auto',
    }),
  };
  const merged = deepMerge(base, config.configContent ?? {});
  return {
    files: [{ path: '.factory/settings.json', content: `${JSON.stringify(merged, null, 2)}\n`, mode: 0o600 }],
    secrets,
  };
}

// Plain-object deep merge: objects merge key by key, anything else (arrays included) is replaced.
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
