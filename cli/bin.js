#!/usr/bin/env node
// The `one-works` command as earlier versions named its entry point: it runs cli/bin.cjs, the
// entry point (package.json `bin`). Scripts and tests that start `node cli/bin.js` keep working;
// they pay Node's ESM loader (some 6 ms) that cli/bin.cjs spares.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./bin.cjs');
