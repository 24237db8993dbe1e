import type { ResolvedCli, ThrowawayLauncher } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { type Connection, createConnection } from '../../core/protocol/index.js';
import type { CodexConfig } from './config.js';
import { CODEX_HOME_DIRS, codexSeedFiles, describeCodexLaunch } from './launch.js';
import { CODEX_REQUESTS, codexEnvelope } from './wire.js';

/**
 * Runs `use` against a `codex app-server` started through `launch` (a throwaway HOME core
 * removes afterwards) after `initialize` / `initialized`, without any thread or prompt, and stops
 * the child before resolving. The config.toml is seeded into `$HOME/.codex` (Codex's default
 * CODEX_HOME), so the throwaway run is as loopback-only as a session. Rejects with
 * `probe_failed` (with codex's stderr tail) when codex fails.
 */
export async function withThrowawayAppServer<T>(
  config: CodexConfig,
  cli: ResolvedCli,
  launch: ThrowawayLauncher,
  workdir: string,
  what: string,
  use: (conn: Connection, initialized: { userAgent: string }) => Promise<T>,
): Promise<T> {
  const spec = describeCodexLaunch(config, cli, { cwd: workdir, home: workdir, hostEnv: {} });
  // The throwaway launcher owns HOME: Codex's state follows it ($HOME/.codex) rather than the workdir.
  const { CODEX_HOME: _home, TMPDIR: _tmp, ...env } = spec.env;
  const seeds = codexSeedFiles(config, workdir).filter((file) => file.path.startsWith(`${CODEX_HOME_DIRS.home}/`));
  const child = await launch({ ...spec, env }, seeds);
  const conn = createConnection(child.transport, codexEnvelope, { defaultTimeoutMs: config.requestTimeoutMs, idType: 'number' });
  try {
    const exited = child.exited.then((exit) => {
      throw new OneWorksError('process_exited', `codex exited (${exit.signal ?? exit.exitCode}) during the ${what}`);
    });
    exited.catch(() => undefined);
    await conn.start();
    const run = async (): Promise<T> => {
      const init = await conn.request(
        CODEX_REQUESTS.initialize,
        { clientInfo: { name: 'one-works', title: 'One Works', version: '0' }, capabilities: null },
        { timeoutMs: config.startupTimeoutMs },
      );
      await conn.notify('initialized', undefined);
      return use(conn, init);
    };
    return await Promise.race([run(), exited]);
  } catch (error) {
    const tail = child.stderrTail().trim();
    throw new OneWorksError(
      'probe_failed',
      `the ${what} of codex ${cli.version} at ${cli.binaryPath} failed: ${error instanceof Error ? error.message : String(error)}${tail ? `; stderr: ${tail.slice(-300)}` : ''}`,
      { cause: error },
    );
  } finally {
    await conn.close();
    await child.stop('shutdown');
  }
}

/** The CLI version in the app-server's user agent: `one-works/0.171.0 (Debian …)` → `0.171.0`. */
export function versionFromUserAgent(userAgent: string): string | undefined {
  return /\/(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(userAgent)?.[1];
}
