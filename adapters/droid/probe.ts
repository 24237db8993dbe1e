import type { ProbeResult, ResolvedCli, ThrowawayLauncher } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { createConnection } from '../../core/protocol/index.js';
import type { DroidConfig } from './config.js';
import { createDroidEnvelope } from './envelope.js';
import { InitializeSession } from './methods.js';
import { parseInitializeResult, readAnnouncedVersions } from './negotiate.js';
import { describeDroidLaunch } from './launch.js';
import { composeDroidSettings } from './settings.js';
import { DEFAULT_PROTOCOL_FOR_PROBE } from './versions.js';

/**
 * Starts droid in stream-jsonrpc mode in a throwaway HOME, initializes a session without any
 * prompt, reads the API and protocol versions from its first frame, and stops it. The frames we
 * send carry the table's protocol for this version when known (droid does not enforce it).
 */
export async function probeDroid(config: DroidConfig, cli: ResolvedCli, launch: ThrowawayLauncher, workdir: string): Promise<ProbeResult> {
  const settings = composeDroidSettings({ ...config, customModels: [] }, { scope: 'throwaway' });
  const child = await launch(describeDroidLaunch(config, cli, { cwd: workdir, settings, credentials: false }), settings.files);
  const conn = createConnection(
    child.transport,
    createDroidEnvelope({ protocolVersion: cli.expected?.protocolVersion ?? DEFAULT_PROTOCOL_FOR_PROBE }),
    { defaultTimeoutMs: config.startupTimeoutMs, idPrefix: 'probe-' },
  );
  let announced: { apiVersion?: string | undefined; protocolVersion?: string | undefined } | undefined;
  conn.onInbound((frame) => {
    announced ??= readAnnouncedVersions(frame);
  });
  try {
    await conn.start();
    const init = parseInitializeResult(
      await conn.request(InitializeSession, { machineId: 'one-works-probe', cwd: workdir, autonomyLevel: 'off' }),
    );
    return {
      cliVersion: cli.version,
      binaryPath: cli.binaryPath,
      apiVersion: announced?.apiVersion,
      protocolVersion: announced?.protocolVersion,
      details: { availableModels: init.availableModels?.length ?? 0 },
    };
  } catch (error) {
    const tail = child.stderrTail().trim();
    throw new OneWorksError(
      'probe_failed',
      `probe of droid ${cli.version} at ${cli.binaryPath} failed: ${error instanceof Error ? error.message : String(error)}${tail ? `; stderr: ${tail.slice(-300)}` : ''}`,
      { cause: error },
    );
  } finally {
    conn.close();
    await child.stop('shutdown');
  }
}
