import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { INHERITED_ENV_VARS, PRESENTATION_ENV_VARS } from '../../core/process/env.js';
import type { CliContext } from '../context.js';

/** What the fingerprint is computed from. */
export type FingerprintSource = Pick<CliContext, 'config' | 'configPath' | 'approvedRoots' | 'env'>;

/**
 * The parts of an environment's identity, by name: `config file` (the file's path and bytes),
 * `approved roots` (the current directory when no config file exists), one `config <key path>`
 * per leaf of the resolved configuration (so every `${VAR}` value and credential counts), and
 * one `env <NAME>` per variable children inherit (INHERITED_ENV_VARS) except the presentation
 * ones (PRESENTATION_ENV_VARS: TERM, COLORTERM, NO_COLOR), which travel with each turn instead.
 * Values are canonical JSON, and stay in this process: only digests cross the control socket.
 */
export function environmentParts(source: FingerprintSource): Map<string, string> {
  const parts = new Map<string, string>();
  const file = source.configPath ? `${source.configPath}\0${readConfigBytes(source.configPath)}` : '(no config file)';
  parts.set('config file', file);
  parts.set('approved roots', stableJson(source.approvedRoots));
  for (const [path, value] of leaves(source.config, [])) parts.set(`config ${path}`, stableJson(value));
  const presentation = new Set<string>(PRESENTATION_ENV_VARS);
  for (const name of INHERITED_ENV_VARS) {
    if (!presentation.has(name)) parts.set(`env ${name}`, stableJson(source.env[name] ?? null));
  }
  return parts;
}

/**
 * The environment fingerprint of a command or a server: sha256 (hex) over every part of
 * {@link environmentParts}, sorted by name. A client and a server with different fingerprints
 * would run turns differently (e.g. FACTORY_API_KEY exported after the server started), so the
 * client does not use that server.
 */
export function environmentFingerprint(source: FingerprintSource): string {
  return fingerprintOf(environmentParts(source));
}

function fingerprintOf(parts: Map<string, string>): string {
  const hash = createHash('sha256');
  hash.update('one-works-fingerprint-2\0');
  for (const name of [...parts.keys()].sort()) hash.update(`${name}\0${parts.get(name)}\0`);
  return hash.digest('hex');
}

/**
 * What a server tells its clients about its identity: the fingerprint, and an HMAC-SHA256 of
 * each part keyed by a random key of this server process. A same-user client (the socket is
 * 0600) computes its own digests with that key and learns which parts differ, by name; the
 * key is fresh per server, so no digest is a plain hash of a (possibly weak) secret that could
 * be looked up or compared across servers.
 */
export interface ServerIdentity {
  fingerprint: string;
  /** Hex key of the digests. */
  key: string;
  /** Part name → hex HMAC of its value. */
  digests: Record<string, string>;
}

/** This process's identity as a server. */
export function serverIdentity(source: FingerprintSource): ServerIdentity {
  const parts = environmentParts(source);
  const key = randomBytes(32).toString('hex');
  return { fingerprint: fingerprintOf(parts), key, digests: digestsOf(parts, key) };
}

/** The names of the parts where `source` and the server differ (present on one side only counts). */
export function differingParts(source: FingerprintSource, server: Pick<ServerIdentity, 'key' | 'digests'>): string[] {
  const mine = digestsOf(environmentParts(source), server.key);
  const names = new Set([...Object.keys(mine), ...Object.keys(server.digests)]);
  return [...names].filter((name) => mine[name] !== server.digests[name]).sort();
}

function digestsOf(parts: Map<string, string>, key: string): Record<string, string> {
  const secret = Buffer.from(key, 'hex');
  return Object.fromEntries(
    [...parts].map(([name, value]) => [name, createHmac('sha256', secret).update(`${name}\0${value}`).digest('hex')]),
  );
}

// Leaf values of the resolved configuration by dotted key path; arrays are leaves, an empty
// object has none (a key set on one side only is named once, by its own path).
function* leaves(value: unknown, path: string[]): Generator<[string, unknown]> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) yield* leaves(child, [...path, key]);
    return;
  }
  if (path.length > 0) yield [path.join('.'), value];
}

// A config file that vanished since it was loaded still yields a (different) fingerprint.
function readConfigBytes(path: string): string {
  try {
    return readFileSync(path).toString('base64');
  } catch {
    return '(unreadable)';
  }
}

// JSON with object keys sorted at every level, so equal values hash equally.
function stableJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    ) ?? 'undefined'
  );
}
