import type { EarlySeed } from './early-intent.js';

// The intent cli/bin.cjs told before the command loaded (cli/early-intent.ts), from `main` to the
// `run` command that takes it. A module of its own: main.ts loads it for every command.
let seed: EarlySeed | undefined;

/** Hands `main`'s early intent (if any) to the command that runs. */
export function putEarlySeed(early: EarlySeed | undefined): void {
  seed = early;
}

/** The early intent, once: the caller owns it from then on (it uses or discards it). */
export function takeEarlySeed(): EarlySeed | undefined {
  const taken = seed;
  seed = undefined;
  return taken;
}
