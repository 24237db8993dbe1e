// A `--require` preload (through NODE_OPTIONS) that holds a `one-works … serve` process before
// it loads anything, for OW_TEST_SERVE_HOLD_MS ms: a server start as slow as one that gets little
// CPU on a loaded machine, alive all the while. Other commands start as usual.
'use strict';

const holdMs = Number(process.env.OW_TEST_SERVE_HOLD_MS ?? 0);
if (holdMs > 0 && process.argv.includes('serve')) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, holdMs);
}
