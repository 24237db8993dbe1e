import type * as FsPromises from 'node:fs/promises';
import { requireBuiltin } from './builtin-require.js';

/**
 * node:fs/promises' functions, the module loaded on first call. Loading it costs a short command
 * some 4.4M instructions (its file handles bring readline's interface, the watchers and fs.Dir
 * with them), and the store's modules, which the read-only commands load, call it only to write,
 * lock, follow or measure: `sessions` and `events` read with synchronous calls
 * (FileStoreOptions.syncReads) and never call it. A module imported through
 * `import … from 'node:fs/promises'` is loaded with its importer, so these take it through
 * `require`, as core/lazy-crypto.ts does for node:crypto.
 */
let loaded: typeof FsPromises | undefined;

function fsPromises(): typeof FsPromises {
  loaded ??= requireBuiltin('node:fs/promises') as typeof FsPromises;
  return loaded;
}

// node:fs/promises' function `name`, with its own signature, calling the module loaded on first use.
function lazy<Name extends keyof typeof FsPromises>(name: Name): (typeof FsPromises)[Name] {
  return ((...args: unknown[]) => (fsPromises()[name] as (...args: unknown[]) => unknown)(...args)) as (typeof FsPromises)[Name];
}

export const link = lazy('link');
export const lstat = lazy('lstat');
export const mkdir = lazy('mkdir');
export const open = lazy('open');
export const readdir = lazy('readdir');
export const readFile = lazy('readFile');
export const rename = lazy('rename');
export const rm = lazy('rm');
export const stat = lazy('stat');
export const unlink = lazy('unlink');
