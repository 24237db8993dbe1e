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
    createDroidEnvelope({ protocolVersion: cli.expected?.facts.protocolVersion ?? DEFAULT_PROTOCOL_FOR_PROBE }),
    { defaultTimeoutMs: config.startupTimeoutMs, idPrefix: 'probe-' },
  );
  let announced: { apiVersion?: string | undefined; protocolVersion?: string | undefined } | undefined;
  conn.onInbound((frame) => {
    announced ??= readAnnouncedVersions(frame);
  });
  // The first line that was not a frame: what a binary that is not droid printed.
  let garbage: string | undefined;
  conn.onProblem((problem) => {
    const line = (problem.data as { line?: unknown } | undefined)?.line;
    if (garbage === undefined && typeof line === 'string') garbage = line;
  });
  try {
    await conn.start();
    const init = parseInitializeResult(
      await conn.request(InitializeSession, { machineId: 'one-works-probe', cwd: workdir, autonomyLevel: 'off' }),
    );
    return {
      cliVersion: cli.version,
      binaryPath: cli.binaryPath,
      facts: {
        ...(announced?.apiVersion ? { apiVersion: announced.apiVersion } : {}),
        ...(announced?.protocolVersion ? { protocolVersion: announced.protocolVersion } : {}),
      },
      details: { availableModels: init.availableModels?.length ?? 0 },
    };
  } catch (error) {
    const tail = child.stderrTail().trim();
    const stderr = tail ? `; stderr: ${JSON.stringify(tail.slice(-300))}` : '';
    // A binary that exited on its own says more by its exit status and output than the closed pipe does.
    const exit = await Promise.race([child.exited, delay(EXIT_WAIT_MS)]);
    if (exit && exit.stopReason === undefined) {
      const printed = garbage === undefined ? 'nothing on stdout' : `"${printable(garbage)}" on stdout`;
      throw new OneWorksError(
        'probe_failed',
        `probe of droid ${cli.version} at ${cli.binaryPath} failed: it exited with ${exit.exitCode === null ? `signal ${exit.signal}` : `status ${exit.exitCode}`} before answering initialize_session; it printed ${printed}${stderr}`,
        { cause: error, data: { exitCode: exit.exitCode, signal: exit.signal } },
      );
    }
    throw new OneWorksError(
      'probe_failed',
      `probe of droid ${cli.version} at ${cli.binaryPath} failed: ${error instanceof Error ? error.message : String(error)}${stderr}`,
      { cause: error },
    );
  } finally {
    conn.close();
    await child.stop('shutdown');
  }
}

/** How long a failed probe waits to learn whether the binary exited by itself. */
const EXIT_WAIT_MS = 1_000;

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

/** The first bytes of a line, control characters escaped, at most 120 characters. */
export function printable(text: string): string {
  const head = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return JSON.stringify(head).slice(1, -1);
}
