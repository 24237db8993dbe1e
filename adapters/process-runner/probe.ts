import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ProbeResult, ResolvedCli, ThrowawayLauncher } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { HarnessConfig } from './config.js';
import { toolDefinitions, toolsOf } from './tools.js';
import { decodeRunnerMessage, MAX_LINE_BYTES, METHODS, OpenResultSchema, RUNNER_PROTOCOL_VERSION } from './wire.js';

/**
 * Starts the runner in a throwaway sandbox with no credentials, sends `open` on an empty
 * directory (no prompt: a passive open makes no model or tool call) and checks that it answers
 * with a well-formed RunnerFrame reply within `openTimeoutMs`. Stops the child before resolving.
 */
export async function probeRunner(
  config: HarnessConfig,
  cli: ResolvedCli,
  launch: ThrowawayLauncher,
  workdir: string,
): Promise<ProbeResult> {
  const dir = path.join(workdir, 'runner-probe');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const child = await launch(
    {
      command: cli.binaryPath,
      args: [...config.args],
      cwd: workdir,
      env: { ...config.env, NO_COLOR: '1' },
      secrets: [],
      maxLineBytes: MAX_LINE_BYTES,
      readOnly: config.args.filter((arg) => path.isAbsolute(arg)),
    },
    [],
  );
  try {
    const resumed = await new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new OneWorksError('request_timeout', `no answer to open within ${config.openTimeoutMs} ms`)),
        config.openTimeoutMs,
      );
      timer.unref();
      child.transport.onmessage = (message) => {
        clearTimeout(timer);
        const decoded = decodeRunnerMessage(message);
        if (!decoded.ok) return reject(new OneWorksError('protocol_error', decoded.problem));
        if (decoded.message.kind !== 'reply' || decoded.message.frame.id !== 'probe-1' || 'error' in decoded.message.frame) {
          return reject(new OneWorksError('protocol_error', `expected the reply to open, got ${JSON.stringify(message).slice(0, 200)}`));
        }
        const result = OpenResultSchema.safeParse(decoded.message.frame.result);
        if (!result.success) return reject(new OneWorksError('protocol_error', 'invalid open result'));
        resolve(result.data.resumed);
      };
      child.transport.onerror = (error) => reject(error);
      void child.exited.then((exit) =>
        reject(new OneWorksError('process_exited', `the runner exited (${exit.signal ?? exit.exitCode}) before answering open`)),
      );
      const tools = toolsOf(config.tools);
      // A runner that dies at once makes the send reject: that fails the probe, never the process.
      child.transport
        .start()
        .then(() =>
          child.transport.send({
            attachment: 'probe',
            id: 'probe-1',
            method: METHODS.open,
            params: { session_id: 'probe', dir, config: { tools: [...tools.keys()] }, tools: toolDefinitions(tools), provider: {} },
          }),
        )
        .catch(reject);
    });
    return {
      cliVersion: cli.version,
      binaryPath: cli.binaryPath,
      facts: { api: 'runner-frame', protocolVersion: RUNNER_PROTOCOL_VERSION },
      details: { resumed },
    };
  } catch (error) {
    const tail = child.stderrTail().trim();
    throw new OneWorksError(
      'probe_failed',
      `probe of ${[cli.binaryPath, ...config.args].join(' ')} failed: ${error instanceof Error ? error.message : String(error)}${tail ? `; stderr: ${tail.slice(-300)}` : ''}`,
      { cause: error },
    );
  } finally {
    await child.stop('shutdown');
  }
}
