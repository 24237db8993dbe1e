#!/usr/bin/env node
// Entry point of the `one-works` command. The sources are TypeScript; tsx (a runtime
// dependency) loads them, so the bin works from a checkout after `npm ci` and after a global
// install without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
