import { readFile } from 'node:fs/promises';
import type * as NodeTls from 'node:tls';
import { requireBuiltin } from '../builtin-require.js';

/**
 * Node reads and parses the file `NODE_EXTRA_CA_CERTS` names at every process start, before any
 * code runs, whether the process makes a TLS connection or not: ~60 ms of CPU for a system
 * bundle of some 150 certificates on a 2-core machine (`node -e 0`: 39-55 ms without, 98-144 ms
 * with). A process One Works starts for itself and that rarely opens a TLS connection (the
 * auto-started orchestrator: its only TLS client is the managed installer) gets the variable
 * under this name instead, and puts it back first thing (`restoreDeferredCaCerts`): the agents
 * it starts and everything that reads the environment see it unchanged, and the installer's
 * connections trust the same certificates through `ca` (`deferredCaCertificates`).
 */
export const DEFERRED_CA_CERTS_VAR = 'ONE_WORKS_DEFERRED_EXTRA_CA_CERTS';

/**
 * The environment for a One Works process to start with its extra CA certificates deferred
 * (`env` itself when there is nothing to defer). Not deferred when NODE_OPTIONS picks the CA
 * store (`--use-openssl-ca`, `--use-bundled-ca`): `ca` could not say the same.
 */
export function deferCaCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = env.NODE_EXTRA_CA_CERTS;
  if (!file || /--use-(openssl|bundled)-ca/.test(env.NODE_OPTIONS ?? '')) return env;
  const { NODE_EXTRA_CA_CERTS: _deferred, ...rest } = env;
  return { ...rest, [DEFERRED_CA_CERTS_VAR]: file };
}

/** The file whose certificates this process's start did not load (deferred), if any. */
let deferredFile: string | undefined;

/**
 * First thing in a process started with `deferCaCerts`: NODE_EXTRA_CA_CERTS is set again, so that
 * what reads the environment (an agent's passEnv, the orchestrator's fingerprint) sees what the
 * user set; the file is kept for `deferredCaCertificates`.
 */
export function restoreDeferredCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[DEFERRED_CA_CERTS_VAR];
  delete env[DEFERRED_CA_CERTS_VAR];
  if (!file) return;
  env.NODE_EXTRA_CA_CERTS = file;
  deferredFile = file;
}

/**
 * The certificates a TLS client of this process must trust (`ca`), when its start deferred them:
 * Node's own roots and the deferred file's, as NODE_EXTRA_CA_CERTS would have made its store.
 * Undefined when nothing was deferred, or when the file cannot be read (Node ignores such a file
 * too, with a warning, and keeps its roots).
 */
export async function deferredCaCertificates(): Promise<string[] | undefined> {
  if (deferredFile === undefined) return undefined;
  const extra = await readFile(deferredFile, 'utf8').catch(() => undefined);
  if (extra === undefined) return undefined;
  // node:tls when first needed (requireBuiltin: the build refuses an import()).
  const { rootCertificates } = requireBuiltin('node:tls') as typeof NodeTls;
  return [...rootCertificates, extra];
}
