import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { OneWorksError } from '../../../core/errors.js';
import type { ErrorCode } from '../../../core/errors.js';
import type { RegistryConfig } from '../../../core/install/index.js';
import type { RegistryStub } from '../../support/registry-stub.js';

/** A scratch cache root; `remove` deletes it. */
export async function scratchDir(): Promise<{ root: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'ow-install-'));
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Registry settings pointing at the stub, with optional tokens. */
export function stubRegistry(stub: RegistryStub, authTokens: Record<string, string> = {}): RegistryConfig {
  return { registry: stub.url, scopes: {}, authTokens };
}

/** Entries next to `targetDir` that belong to it (the target itself and its temp/aside siblings). */
export async function siblingsOf(targetDir: string): Promise<string[]> {
  const base = path.basename(targetDir);
  const names = await readdir(path.dirname(targetDir)).catch(() => [] as string[]);
  return names.filter((name) => name.startsWith(base)).sort();
}

/** Awaits a rejection and checks it is a OneWorksError with `code`; returns it. */
export async function rejection(promise: Promise<unknown>, code: ErrorCode): Promise<OneWorksError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OneWorksError);
  expect((error as OneWorksError).code).toBe(code);
  return error as OneWorksError;
}
