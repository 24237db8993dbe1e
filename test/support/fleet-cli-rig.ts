import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { ONE_WORKS_BIN } from './cli-runner.js';

/** The plain-Node RunnerFrame runner the fleet tests and bench run as `process:echo`. */
export const ECHO_RUNNER = fileURLToPath(new URL('../peers/echo-runner.mjs', import.meta.url));

/** The `adapters:` block that declares `process:echo` (autonomy high: nothing it does asks). */
export const ECHO_ADAPTER_YAML = [
  'adapters:',
  '  process:',
  '    harnesses:',
  `      echo: { command: ${process.execPath}, args: [${ECHO_RUNNER}], autonomy: high }`,
].join('\n');

/** The state block of a fleet member: the database URL is taken from OW_TEST_DATABASE_URL, never written. */
export function fleetStateYaml(stateDir: string): string {
  return ['state:', `  directory: ${stateDir}`, '  backend: postgres', '  postgres:', '    url: ${OW_TEST_DATABASE_URL}'].join('\n');
}

/** A `one-works serve --worker NAME` process of a test fleet. */
export interface TestWorker {
  name: string;
  pid: number;
  /** What it printed on stderr so far. */
  stderr(): string;
  /** SIGTERM, then waits for its exit (SIGKILL after 20 s); resolves its exit code. */
  stop(): Promise<number | undefined>;
}

export interface WorkerOptions {
  /** The worker's own directory: its one-works.yaml and its state directory go there. */
  dir: string;
  /** Approved workspace roots. */
  roots: readonly string[];
  maxConcurrentRuns: number;
  /** The fleet's database URL (a secret: passed through the environment). */
  url: string;
  /** Extra lines of the worker's `orchestrator:` block. */
  orchestrator?: readonly string[];
}

/**
 * Starts a worker with its own config and state directory and resolves once it serves (its
 * `serving the fleet` line); rejects with its output when it exits first or is not up in 60 s.
 * The caller stops it.
 */
export async function startWorker(name: string, options: WorkerOptions): Promise<TestWorker> {
  await mkdir(options.dir, { recursive: true });
  await writeFile(
    join(options.dir, 'one-works.yaml'),
    [
      fleetStateYaml(join(options.dir, 'state')),
      'workspaces:',
      '  approved:',
      ...options.roots.map((root) => `    - ${root}`),
      'orchestrator:',
      `  maxConcurrentRuns: ${options.maxConcurrentRuns}`,
      ...(options.orchestrator ?? []).map((line) => `  ${line}`),
      ECHO_ADAPTER_YAML,
      '',
    ].join('\n'),
  );
  const child: ResultPromise = execa(process.execPath, [ONE_WORKS_BIN, 'serve', '--worker', name], {
    cwd: options.dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: options.dir,
      TMPDIR: process.env.TMPDIR ?? '/tmp',
      OW_TEST_DATABASE_URL: options.url,
    },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    forceKillAfterDelay: 20_000,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = child.then((result) => result.exitCode);
  const worker: TestWorker = {
    name,
    pid: child.pid!,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  const deadline = Date.now() + 60_000;
  while (!stderr.includes(`worker ${name} serving the fleet`)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await worker.stop();
      throw new Error(`worker ${name} did not start:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return worker;
}

/** Polls `probe` every 100 ms until it gives a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
