import { createRequire } from 'node:module';

/**
 * `require` for a builtin a module loads on first use (node:crypto, node:tls, node:timers/promises),
 * where an import would load it with the module and an import() cannot run in the build (a bundle
 * run through node:vm with a code cache has no import()). In the build this module is the bundle's
 * own `require` (scripts/build.js, bundleRequire): node:module, which loads Node's ES module loader
 * and source maps with it, is then not loaded by a command that needs none of them.
 */
export const requireBuiltin: (id: string) => unknown = createRequire(import.meta.url);
