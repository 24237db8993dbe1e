import type { ProbeResult, ResolvedCli, ThrowawayLauncher, VersionFacts } from '../../core/adapter.js';
import { versionFromUserAgent, withThrowawayAppServer } from './app-server-client.js';
import type { CodexConfig } from './config.js';

/**
 * Starts `codex app-server` in a throwaway HOME with no credentials and no endpoint, sends
 * `initialize` (no thread, no model request) and reads the version its user agent announces.
 */
export function probeCodex(config: CodexConfig, cli: ResolvedCli, launch: ThrowawayLauncher, workdir: string): Promise<ProbeResult> {
  const bare: CodexConfig = { ...config, credentials: {}, endpoint: undefined };
  return withThrowawayAppServer(bare, cli, launch, workdir, 'probe', async (_conn, init) => {
    const version = versionFromUserAgent(init.userAgent);
    return {
      cliVersion: cli.version,
      binaryPath: cli.binaryPath,
      facts: (version ? { codexVersion: version } : {}) as VersionFacts,
      details: { userAgent: init.userAgent },
    };
  });
}
