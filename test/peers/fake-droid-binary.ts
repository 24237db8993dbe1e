import { chmod, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeDroidFault } from './fake-droid-config.js';

const PEERS_DIR = fileURLToPath(new URL('.', import.meta.url));
/** Absolute path of the static wrapper (`node` from PATH, env from the caller). */
export const FAKE_DROID_WRAPPER = join(PEERS_DIR, 'fake-droid');
/** Absolute path of the tsx loader the wrappers preload. */
export const TSX_LOADER = resolve(PEERS_DIR, '../../node_modules/tsx/dist/loader.mjs');

export interface FakeDroidBinaryOptions {
  faults?: FakeDroidFault[];
  version?: string;
  protocol?: string;
  api?: string;
  reply?: string;
  stepMs?: number;
  lingerMs?: number;
  /** File that receives every stdin line the fake droid reads. */
  recordPath?: string;
}

// Quotes a value for a POSIX shell.
const quote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Writes `<dir>/droid`, an executable shell script that runs the fake droid with the given
 * options baked in as FAKE_DROID_* variables and absolute node/tsx paths, so it behaves the same
 * under any environment allowlist (a runtime that passes only PATH and HOME still gets the
 * faults). Returns the script's path. The caller owns `dir`.
 */
export async function writeFakeDroidBinary(dir: string, options: FakeDroidBinaryOptions = {}): Promise<string> {
  const env: Record<string, string | undefined> = {
    FAKE_DROID_FAULT: options.faults?.join(','),
    FAKE_DROID_VERSION: options.version,
    FAKE_DROID_PROTOCOL: options.protocol,
    FAKE_DROID_API: options.api,
    FAKE_DROID_REPLY: options.reply,
    FAKE_DROID_STEP_MS: options.stepMs?.toString(),
    FAKE_DROID_LINGER_MS: options.lingerMs?.toString(),
    FAKE_DROID_RECORD: options.recordPath,
  };
  const exports = Object.entries(env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `export ${name}=${quote(value)}`);
  const script = [
    '#!/bin/sh',
    ...exports,
    `exec ${quote(process.execPath)} --import ${quote(TSX_LOADER)} ${quote(join(PEERS_DIR, 'fake-droid.ts'))} "$@"`,
    '',
  ].join('\n');
  const path = join(dir, 'droid');
  await writeFile(path, script, { mode: 0o755 });
  await chmod(path, 0o755);
  return path;
}
