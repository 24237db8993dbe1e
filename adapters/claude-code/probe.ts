import type { ProbeResult, ResolvedCli, ThrowawayLauncher } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { ClaudeConfig } from './config.js';
import { describeClaudeLaunch } from './launch.js';
import { controlRequest } from './wire.js';

/**
 * Starts claude in stream-json mode in a throwaway HOME with no credentials, sends `initialize`
 * (no prompt, no model request) and reads what it announces: `claude_code_version`, the
 * permission mode and the number of models it lists. Stops the child before resolving.
 */
export async function probeClaude(
  config: ClaudeConfig,
  cli: ResolvedCli,
  launch: ThrowawayLauncher,
  workdir: string,
): Promise<ProbeResult> {
  const spec = describeClaudeLaunch({ ...config, credentials: {}, endpoint: undefined, mcpServers: {} }, cli, {
    cwd: workdir,
    home: workdir,
    session: undefined,
    model: undefined,
    effort: undefined,
    hostEnv: {},
  });
  // The throwaway launcher owns the HOME: state dirs follow it rather than the workdir.
  const { CLAUDE_CONFIG_DIR: _c, CLAUDE_CODE_TMPDIR: _t, XDG_RUNTIME_DIR: _x, ...env } = spec.env;
  const child = await launch({ ...spec, env }, []);
  try {
    const response = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new OneWorksError('request_timeout', `no initialize answer within ${config.startupTimeoutMs} ms`)),
        config.startupTimeoutMs,
      );
      timer.unref();
      child.transport.onmessage = (message) => {
        const m = message as { type?: string; response?: { request_id?: string; response?: Record<string, unknown> } };
        if (m.type === 'control_response' && m.response?.request_id === 'probe-1') {
          clearTimeout(timer);
          resolve(m.response.response ?? {});
        }
      };
      void child.exited.then((exit) =>
        reject(new OneWorksError('process_exited', `claude exited (${exit.signal ?? exit.exitCode}) before answering initialize`)),
      );
      void child.transport.start().then(() => child.transport.send(controlRequest('probe-1', { subtype: 'initialize' })));
    });
    const version = typeof response.claude_code_version === 'string' ? response.claude_code_version : undefined;
    return {
      cliVersion: cli.version,
      binaryPath: cli.binaryPath,
      facts: version ? { claudeCodeVersion: version } : {},
      details: {
        permissionMode: response.current_permission_mode,
        models: Array.isArray(response.models) ? response.models.length : 0,
      },
    };
  } catch (error) {
    const tail = child.stderrTail().trim();
    throw new OneWorksError(
      'probe_failed',
      `probe of claude ${cli.version} at ${cli.binaryPath} failed: ${error instanceof Error ? error.message : String(error)}${tail ? `; stderr: ${tail.slice(-300)}` : ''}`,
      { cause: error },
    );
  } finally {
    await child.stop('shutdown');
  }
}
