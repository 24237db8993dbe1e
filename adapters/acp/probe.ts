import type { LaunchSpec, ProbeResult, ResolvedCli, SeedFile, ThrowawayLauncher } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { ACP_API, acpProtocolVersion } from './session.js';
import { transportStream } from './stream.js';

/**
 * Starts an ACP agent in a throwaway HOME, sends `initialize` (no session, no prompt) and reads
 * what it announces: the ACP protocol version, its name and version, whether it can load
 * sessions, its auth methods. Stops the child before resolving.
 */
export async function probeAcp(
  agent: string,
  cli: ResolvedCli,
  launch: ThrowawayLauncher,
  describe: () => { launch: LaunchSpec; seed: SeedFile[] },
  timeoutMs: number,
): Promise<ProbeResult> {
  const described = describe();
  // The ACP SDK (some 2,500 zod schemas) is loaded when an agent is probed or run, not with the adapter.
  const acp = await import('@agentclientprotocol/sdk');
  const child = await launch(described.launch, described.seed);
  try {
    const conn = new acp.ClientSideConnection(
      () => ({
        requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }),
        sessionUpdate: async () => undefined,
      }),
      transportStream(child.transport),
    );
    await child.transport.start();
    const init = await Promise.race([
      conn.initialize({
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      }),
      child.exited.then((exit) => {
        throw new OneWorksError('process_exited', `${agent} exited (${exit.signal ?? exit.exitCode}) before answering initialize`);
      }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new OneWorksError('request_timeout', `no initialize answer within ${timeoutMs} ms`)), timeoutMs).unref(),
      ),
    ]);
    return {
      cliVersion: cli.version,
      binaryPath: cli.binaryPath,
      facts: { api: ACP_API, protocolVersion: acpProtocolVersion(init.protocolVersion) },
      details: {
        agent: init.agentInfo?.name,
        agentVersion: init.agentInfo?.version,
        loadSession: init.agentCapabilities?.loadSession === true,
        authMethods: (init.authMethods ?? []).map((m) => m.id),
      },
    };
  } catch (error) {
    const tail = child.stderrTail().trim();
    throw new OneWorksError(
      'probe_failed',
      `probe of ${agent} ${cli.version} at ${cli.binaryPath} failed: ${error instanceof Error ? error.message : String(error)}${tail ? `; stderr: ${tail.slice(-300)}` : ''}`,
      { cause: error },
    );
  } finally {
    await child.stop('shutdown');
  }
}
