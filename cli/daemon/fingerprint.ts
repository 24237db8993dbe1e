import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { INHERITED_ENV_VARS } from '../../core/process/index.js';
import type { CliContext } from '../context.js';

/** What the fingerprint is computed from. */
export type FingerprintSource = Pick<CliContext, 'config' | 'configPath' | 'approvedRoots' | 'env'>;

/**
 * The environment fingerprint of a command or a server: sha256 (hex) over the config file's
 * bytes, the resolved configuration (so every `${VAR}` value and every credential taken from
 * the environment counts), the approved roots (the current directory when no config file
 * exists) and the values of the variables children inherit (INHERITED_ENV_VARS). A client and
 * a server with different fingerprints would run turns differently (e.g. FACTORY_API_KEY
 * exported after the server started), so the client does not use that server.
 *
 * Only this hash crosses the control socket, never a value. Deterministic: object keys are
 * sorted before hashing.
 */
export function environmentFingerprint(source: FingerprintSource): string {
  const hash = createHash('sha256');
  hash.update('one-works-fingerprint-1\0');
  hash.update(source.configPath ?? '(no config file)');
  hash.update('\0');
  if (source.configPath) hash.update(readConfigBytes(source.configPath));
  hash.update('\0');
  const inherited = Object.fromEntries(INHERITED_ENV_VARS.map((name) => [name, source.env[name] ?? null]));
  hash.update(stableJson({ config: source.config, approvedRoots: source.approvedRoots, inherited }));
  return hash.digest('hex');
}

// A config file that vanished since it was loaded still yields a (different) fingerprint.
function readConfigBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    return Buffer.from('(unreadable)');
  }
}

// JSON with object keys sorted at every level, so equal values hash equally.
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
