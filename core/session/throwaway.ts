import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildChannel, ThrowawayLauncher } from '../adapter.js';
import { Redactor } from '../redact.js';
import { launchInSandbox } from './launch.js';

/** What a body running in a throwaway sandbox gets. */
export interface ThrowawaySandbox {
  /** Starts a launch in the sandbox; every child it starts is stopped when the body settles. */
  launch: ThrowawayLauncher;
  /** An empty working directory inside the sandbox, for the CLI's cwd. */
  workdir: string;
  /** Knows the given secrets and every secret a launch declares; for error messages. */
  redactor: Redactor;
}

/** Options of {@link withThrowawaySandbox}. */
export interface ThrowawayOptions {
  /** Names the temporary directory (`one-works-<purpose>-XXXXXX`) and the sandbox session id. */
  purpose: string;
  /** Secrets registered with the sandbox's redactor before anything starts. */
  secrets?: readonly string[];
}

/**
 * Runs `body` with a throwaway sandbox: its own temporary state dir (under the OS temp dir),
 * HOME and working directory, none of them the user's. Whatever `body` does, every child it
 * launched is stopped (`shutdown`) and the whole sandbox is removed before this settles; the
 * body's result or error is passed through unchanged.
 */
export async function withThrowawaySandbox<T>(options: ThrowawayOptions, body: (sandbox: ThrowawaySandbox) => Promise<T>): Promise<T> {
  const stateDir = await mkdtemp(join(tmpdir(), `one-works-${options.purpose}-`));
  const redactor = new Redactor();
  for (const secret of options.secrets ?? []) redactor.register(secret);
  const children: ChildChannel[] = [];
  try {
    const workdir = await mkdtemp(join(stateDir, 'work-'));
    const launch: ThrowawayLauncher = async (spec, seed) => {
      const child = await launchInSandbox({ stateDir, sessionId: options.purpose, redactor, parentEnv: process.env }, spec, seed);
      children.push(child);
      return child;
    };
    return await body({ launch, workdir, redactor });
  } finally {
    await Promise.allSettled(children.map((child) => child.stop('shutdown')));
    await rm(stateDir, { recursive: true, force: true });
  }
}
