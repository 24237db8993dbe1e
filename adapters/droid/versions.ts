import semver from 'semver';
import type { ResolvedCli, VersionFacts } from '../../core/adapter.js';
import { DROID_API_VERSION as API_VERSION } from './wire.js';

/**
 * The qualified-version table of the droid CLI: which Factory API and stream-jsonrpc protocol
 * versions each CLI line speaks, and which npm platform packages carry the binary.
 */

/** The droid CLI version One Works installs when the config names none. */
export const DEFAULT_PIN = '0.225.2';

/** Protocol facts recorded for a CLI version. */
export interface ProtocolFacts {
  apiVersion: string;
  protocolVersion: string;
}

/** Observed protocol facts per CLI minor line (`major.minor`). */
const PROTOCOL_BY_MINOR: ReadonlyMap<string, ProtocolFacts> = new Map([
  ['0.225', { apiVersion: '1.0.0', protocolVersion: '1.220.0' }],
  ['0.215', { apiVersion: '1.0.0', protocolVersion: '1.206.0' }],
]);

/** The protocol sent on probe frames when the table knows nothing of a version: the default pin's. */
export const DEFAULT_PROTOCOL_FOR_PROBE: string = PROTOCOL_BY_MINOR.get('0.225')?.protocolVersion ?? '1.220.0';

/** Platform package versions seen in the registry and qualified by conformance runs. */
export const KNOWN_PACKAGE_VERSIONS: Readonly<Record<string, readonly string[]>> = {
  '@factory/cli-linux-x64': ['0.215.0', '0.225.2'],
  '@factory/cli-linux-x64-baseline': ['0.225.2'],
};

/** The table's version facts for a CLI version's minor line (`apiVersion`, `protocolVersion`), or undefined. */
export function lookupDroidFacts(version: string): VersionFacts | undefined {
  const parsed = semver.parse(version);
  if (!parsed || parsed.prerelease.length > 0) return undefined;
  const facts = PROTOCOL_BY_MINOR.get(`${parsed.major}.${parsed.minor}`);
  return facts ? { apiVersion: facts.apiVersion, protocolVersion: facts.protocolVersion } : undefined;
}

/** droid's pair out of version facts (a table or lock entry), or undefined when either is missing. */
export function droidProtocolFacts(facts: VersionFacts | undefined): ProtocolFacts | undefined {
  const apiVersion = facts?.apiVersion;
  const protocolVersion = facts?.protocolVersion;
  return apiVersion && protocolVersion ? { apiVersion, protocolVersion } : undefined;
}

/**
 * droid's check of what a probe announced against what is recorded for the version: API 1.0.0,
 * a well-formed protocol version, and the recorded protocol when the version is qualified.
 * Returns the problems, in words; empty when it matches.
 */
export function checkDroidFacts(announced: VersionFacts, expected: ResolvedCli['expected'], cliVersion: string): string[] {
  const problems: string[] = [];
  const api = announced.apiVersion;
  const protocol = announced.protocolVersion;
  if (!api) problems.push('no API version announced');
  else if (api !== API_VERSION) problems.push(`API version ${api}, expected ${API_VERSION}`);
  if (!protocol || !semver.valid(protocol)) problems.push(`protocol version ${JSON.stringify(protocol ?? null)} is missing or malformed`);
  else if (expected && expected.facts.protocolVersion !== protocol) {
    problems.push(
      `protocol ${protocol}, but the ${expected.qualifiedBy === 'table' ? 'built-in table' : 'lock file'} records ${expected.facts.protocolVersion ?? '(none)'} for ${cliVersion}`,
    );
  }
  return problems;
}
