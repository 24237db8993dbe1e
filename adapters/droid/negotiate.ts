import semver from 'semver';
import type { z } from 'zod';
import { OneWorksError } from '../../core/errors.js';
import { describeZodError } from './notifications.js';
import { InitializeSessionResultSchema, LoadSessionResultSchema, type InitializeSessionResult, type LoadSessionResult } from './wire.js';

/**
 * The version contract with droid. droid writes `factoryApiVersion` and `factoryProtocolVersion`
 * on every frame; the first frame it sends decides: a missing, malformed (not semver) or
 * different version ends the session before any prompt, with a message naming what was
 * announced, what was expected, for which CLI version, and how to fix it.
 */

export interface AnnouncedVersions {
  apiVersion?: string;
  protocolVersion?: string;
}

export interface ExpectedVersions {
  apiVersion: string;
  protocolVersion: string;
}

/**
 * Reads the version fields of a frame. Absent fields stay absent; a present field that is not a
 * string is rendered as text (so `checkNegotiation` reports it as malformed rather than missing).
 */
export function readAnnouncedVersions(frame: unknown): AnnouncedVersions {
  if (typeof frame !== 'object' || frame === null) return {};
  const record = frame as Record<string, unknown>;
  const announced: AnnouncedVersions = {};
  const api = render(record.factoryApiVersion);
  const protocol = render(record.factoryProtocolVersion);
  if (api !== undefined) announced.apiVersion = api;
  if (protocol !== undefined) announced.protocolVersion = protocol;
  return announced;
}

function render(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Returns when both announced versions equal the expected ones; otherwise throws
 * `OneWorksError('protocol_mismatch')` whose `data` holds `{cliVersion, field, announced, expected}`.
 */
export function checkNegotiation(announced: AnnouncedVersions, expected: ExpectedVersions, cliVersion: string): void {
  check('factoryApiVersion', 'Factory API', announced.apiVersion, expected.apiVersion, cliVersion);
  check('factoryProtocolVersion', 'protocol', announced.protocolVersion, expected.protocolVersion, cliVersion);
}

function check(field: string, what: string, announced: string | undefined, expected: string, cliVersion: string): void {
  const data = { cliVersion, field, announced: announced ?? null, expected };
  let problem: string | undefined;
  if (announced === undefined) problem = `announced no ${field} on its first frame`;
  else if (semver.valid(announced) === null) problem = `announced a malformed ${field} ${JSON.stringify(announced)} (not a semver version)`;
  else if (announced !== expected) problem = `speaks ${what} ${announced}`;
  if (problem === undefined) return;
  throw new OneWorksError(
    'protocol_mismatch',
    `droid ${cliVersion} ${problem}, but One Works expects ${what} ${expected} for this CLI version. ` +
      `The session was stopped before any prompt. If this droid version is meant to be used, run ` +
      `\`one-works adapters upgrade droid ${cliVersion}\` to probe it and record the versions it speaks; ` +
      `otherwise select a qualified droid version.`,
    { data },
  );
}

/**
 * Validates a `droid.initialize_session` result. Throws `OneWorksError('protocol_error')` naming
 * the bad fields when the shape is not what this adapter understands (no `sessionId`, no
 * `session.messages`, …).
 */
export function parseInitializeResult(result: unknown, cliVersion?: string): InitializeSessionResult {
  return parseResult('initialize_session', InitializeSessionResultSchema, result, cliVersion);
}

/** Validates a `droid.load_session` result (it has no `sessionId`). Throws like `parseInitializeResult`. */
export function parseLoadResult(result: unknown, cliVersion?: string): LoadSessionResult {
  return parseResult('load_session', LoadSessionResultSchema, result, cliVersion);
}

function parseResult<T>(method: string, schema: z.ZodType<T>, result: unknown, cliVersion: string | undefined): T {
  const parsed = schema.safeParse(result);
  if (parsed.success) return parsed.data;
  const who = cliVersion === undefined ? 'droid' : `droid ${cliVersion}`;
  throw new OneWorksError(
    'protocol_error',
    `${who} answered ${method} with a result One Works cannot read (${describeZodError(parsed.error)}). ` +
      `This CLI may speak a different protocol than recorded; run \`one-works adapters upgrade droid ${cliVersion ?? '<version>'}\` to probe it.`,
    { data: { method, cliVersion: cliVersion ?? null }, cause: parsed.error },
  );
}
