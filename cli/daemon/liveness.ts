import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { logPath } from './wire.js';

/**
 * How a client tells a live orchestrator from one that stopped answering (SIGSTOP, a hang):
 * while any call is pending, it pings the server every {@link HEARTBEAT_INTERVAL_MS}; a ping
 * unanswered for {@link UNRESPONSIVE_AFTER_MS} ends every pending call with
 * `orchestrator_unavailable`, naming the server and how to resume or stop it. A server that
 * only takes long (a turn, a cancel grace) answers its pings and is waited for.
 */

/** Interval of pings while a call is pending, in ms. */
export const HEARTBEAT_INTERVAL_MS = 3_000;
/** How long a ping may go unanswered before the server counts as unresponsive, in ms. */
export const UNRESPONSIVE_AFTER_MS = 10_000;

/** The server a client talks to: its socket, and its pid once known (hello, or the owner file). */
export interface ServerIdentity {
  socketPath: string;
  pid?: number | undefined;
}

/** The pid named by `<state>/owner.json` next to the socket, if any (read without validation). */
export function ownerPidOf(socketPath: string): number | undefined {
  try {
    const owner = JSON.parse(readFileSync(join(dirname(socketPath), 'owner.json'), 'utf8')) as { pid?: unknown };
    return typeof owner.pid === 'number' && Number.isInteger(owner.pid) && owner.pid > 0 ? owner.pid : undefined;
  } catch {
    return undefined;
  }
}

/** "pid N, socket S" (or the socket alone) for messages. */
export function describeServer(server: ServerIdentity): string {
  const pid = server.pid ?? ownerPidOf(server.socketPath);
  return pid === undefined ? `socket ${server.socketPath}` : `pid ${pid}, socket ${server.socketPath}`;
}

/** The error every pending call of an unresponsive server ends with. */
export function unresponsiveError(server: ServerIdentity, silentMs: number): OneWorksError {
  const pid = server.pid ?? ownerPidOf(server.socketPath);
  const stopped = pid !== undefined && processState(pid) === 'T';
  const stateDir = dirname(server.socketPath);
  const what = stopped
    ? 'it is stopped (SIGSTOP or Ctrl-Z)'
    : `it did not answer for ${Math.round(silentMs / 1000)} s (hung, or the machine is overloaded)`;
  const how =
    pid === undefined
      ? `Find the \`one-works serve\` process of ${stateDir} and stop it`
      : stopped
        ? `Let it go on with \`kill -CONT ${pid}\`, or stop it with \`kill -TERM ${pid}; kill -CONT ${pid}\` (a stopped process acts on TERM once continued; \`kill -KILL ${pid}\` ends it at once)`
        : `Stop it with \`kill -TERM ${pid}\` (\`kill -KILL ${pid}\` if it is still there after a few seconds)`;
  return new OneWorksError(
    ERROR_CODES.ORCHESTRATOR_UNAVAILABLE,
    `the orchestrator of ${stateDir} (${describeServer({ ...server, pid })}) is not responding: ${what}. ${how}; the next command starts a new one.`,
    { data: { pid, socketPath: server.socketPath, stopped } },
  );
}

/** The error a call gets when the server closed the connection before answering it. */
export function serverGoneError(server: ServerIdentity): OneWorksError {
  return new OneWorksError(
    ERROR_CODES.CONNECTION_CLOSED,
    `the orchestrator (${describeServer(server)}) closed the connection before answering: it stopped or crashed. The next command starts a new one; ${logPath(dirname(server.socketPath))} says why it stopped, if it was started in the background.`,
    { data: { pid: server.pid, socketPath: server.socketPath } },
  );
}

// The state letter of /proc/<pid>/stat (R, S, D, T, Z…), undefined without /proc or the process.
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}
