import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { INHERITED_ENV_VARS, PRESENTATION_ENV_VARS } from '../../core/process/env.js';
import { ADAPTER_CREDENTIALS, type CliContext } from '../context.js';
import { packageVersion } from '../package-root.js';

/** What the fingerprint is computed from. */
export type FingerprintSource = Pick<CliContext, 'config' | 'configPath' | 'explicitKeys' | 'approvedRoots' | 'env'>;

/**
 * The keys of each adapter block that the loader fills from an environment variable when the
 * config leaves them unset (`.meta({ env })` in the block's schema), by block: key path inside the
 * block → variable; made from the blocks' credentials (ADAPTER_CREDENTIALS), which their schemas
 * are built from too. A block the config file leaves out is built only when a command first reads
 * it, so the fingerprint takes these from here instead of building every block;
 * test/cli/daemon-fingerprint-blocks.test.ts checks this table against the schemas.
 */
export const BLOCK_ENV_DEFAULTS: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.fromEntries(
  Object.entries(ADAPTER_CREDENTIALS).map(([block, credentials]) => [
    block,
    Object.fromEntries(Object.keys(credentials).map((name) => [`credentials.${name}`, name])),
  ]),
);

// Config keys whose value is a list of host variables an agent's launch reads from the server's own
// environment when a session starts (`passEnv` of claude-code, codex and gemini; the `credentials`
// of an ACP agent declared by command).
const HOST_VARIABLE_LISTS = [/^adapters\.[^.]+\.passEnv$/, /^adapters\.acp\.agents\.[^.]+\.credentials$/];

/**
 * The parts of an environment's identity, by name: `config file` (the file's path and bytes),
 * `approved roots` (the current directory when no config file exists), `one-works version`, one
 * `config <key path>` per leaf of the resolved configuration (so every `${VAR}` value and
 * credential counts), and one `env <NAME>` per variable children inherit (INHERITED_ENV_VARS)
 * except the presentation ones (PRESENTATION_ENV_VARS: TERM, COLORTERM, NO_COLOR), which travel
 * with each turn instead, and per variable a `passEnv` (or an ACP agent's `credentials`) names
 * (a presentation variable too: the agent's launch reads those from the server's environment).
 *
 * An adapter block the file leaves out counts by the keys it takes from the environment alone
 * ({@link BLOCK_ENV_DEFAULTS}, e.g. `config adapters.droid.credentials.FACTORY_API_KEY` from an
 * exported FACTORY_API_KEY), each named as the leaf it becomes: its other values are the schema's
 * defaults, the same in every process of this version, so the block is not built for this.
 * Values are canonical JSON, and stay in this process: only digests cross the control socket.
 */
export function environmentParts(source: FingerprintSource): Map<string, string> {
  const parts = new Map<string, string>();
  const file = source.configPath ? `${source.configPath}\0${readConfigBytes(source.configPath)}` : '(no config file)';
  parts.set('config file', file);
  parts.set('approved roots', stableJson(source.approvedRoots));
  parts.set('one-works version', packageVersion());
  const { adapters, ...rest } = source.config as Record<string, unknown> & { adapters?: Record<string, unknown> };
  const hostVariables = new Set<string>();
  const addLeaf = (path: string, value: unknown): void => {
    parts.set(`config ${path}`, stableJson(value));
    if (Array.isArray(value) && HOST_VARIABLE_LISTS.some((pattern) => pattern.test(path))) {
      for (const name of value) if (typeof name === 'string') hostVariables.add(name);
    }
  };
  for (const [path, value] of leaves(rest, [])) addLeaf(path, value);
  for (const name of Object.keys(adapters ?? {})) {
    if (source.explicitKeys.has(`adapters.${name}`)) {
      // Named by the file: built already (the config was parsed with it).
      for (const [path, value] of leaves(adapters![name], ['adapters', name])) addLeaf(path, value);
      continue;
    }
    for (const [path, variable] of Object.entries(BLOCK_ENV_DEFAULTS[name] ?? {})) {
      // As the loader fills it: only a variable that is set and not empty.
      const value = source.env[variable];
      if (value !== undefined && value !== '') addLeaf(`adapters.${name}.${path}`, value);
    }
  }
  const presentation = new Set<string>(PRESENTATION_ENV_VARS);
  // A presentation variable a passEnv names still counts: the launch reads it from the server's environment.
  const counted = [...INHERITED_ENV_VARS.filter((name) => !presentation.has(name)), ...hostVariables];
  for (const name of counted) parts.set(`env ${name}`, stableJson(source.env[name] ?? null));
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
  hash.update('one-works-fingerprint-3\0');
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
