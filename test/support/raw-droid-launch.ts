import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Environment variables that keep droid offline and quiet: with `FACTORY_AIRGAP_ENABLED=true`
 * droid 0.225.2 only connects to loopback (the model server), see scripted-model.md.
 */
export const RAW_DROID_OFFLINE_ENV: Readonly<Record<string, string>> = {
  FACTORY_AIRGAP_ENABLED: 'true',
  DROID_DISABLE_AUTO_UPDATE: 'true',
  FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
};

// Variables taken from the parent; everything else is left out so the child sees no secrets.
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SHELL'];

/**
 * The child's whole environment: a short allowlist from the parent, `HOME`, the offline
 * variables, then `extra` (which wins).
 */
export function rawDroidEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, HOME: home, ...RAW_DROID_OFFLINE_ENV, ...extra };
}

/** argv (after the binary) for a stream-jsonrpc session rooted at `cwd`. */
export function rawDroidArgs(cwd: string, extra: readonly string[] = []): string[] {
  return ['exec', '--input-format', 'stream-jsonrpc', '--output-format', 'stream-jsonrpc', '--cwd', cwd, ...extra];
}

/**
 * Writes `<home>/.factory/settings.json` (directories mode 0700, file 0600), replacing any
 * existing file. Typical content: `{ customModels: [droidCustomModel(baseUrl).entry] }`.
 */
export async function writeRawDroidSettings(home: string, settings: Record<string, unknown>): Promise<string> {
  const dir = join(home, '.factory');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'settings.json');
  await writeFile(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  return file;
}
