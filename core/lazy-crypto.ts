import type * as NodeCrypto from 'node:crypto';
import { requireBuiltin } from './builtin-require.js';

/**
 * node:crypto's functions, the module loaded on first call. Loading node:crypto costs a short
 * command some 3 ms of CPU (its cipher, key and certificate modules come with it), and the store,
 * the ask board and the request keys, which every client command loads, use it only to name a
 * temporary file, an ask or a key: `sessions` never calls them. A module imported through
 * `import … from 'node:crypto'` is loaded with its importer, so these take it through `require`.
 */
let nodeCrypto: typeof NodeCrypto | undefined;

function crypto(): typeof NodeCrypto {
  nodeCrypto ??= requireBuiltin('node:crypto') as typeof NodeCrypto;
  return nodeCrypto;
}

/** node:crypto's `randomBytes(size)`: `size` cryptographically strong random bytes. */
export function randomBytes(size: number): Buffer {
  return crypto().randomBytes(size);
}

/** node:crypto's `createHash(algorithm)`. */
export function createHash(algorithm: string): NodeCrypto.Hash {
  return crypto().createHash(algorithm);
}
