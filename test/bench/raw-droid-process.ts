/**
 * The raw client as a program of its own, for the bench's start-to-exit baselines: the same
 * minimal stream-jsonrpc client (test/support/raw-droid-client.ts), bundled by the bench into one
 * plain JavaScript file and run as `node <bundle> '<json>'`, so that it pays a process start and
 * an exit as `one-works run` does. It spawns droid, then either starts a session (initialize,
 * settings) or loads one (`load`: a native session id), runs one turn, prints the native session
 * id and droid's pid on stdout, SIGTERMs droid's process group and exits without waiting for droid to go (as
 * `one-works run` leaves closing the agent to the orchestrator).
 */
import { startRawDroid } from '../support/raw-droid-client.js';

interface RawTurnRequest {
  binary: string;
  cwd: string;
  home: string;
  settings: Record<string, unknown>;
  modelId: string;
  /** A native session to load instead of starting a new one. */
  load?: string;
}

const request = JSON.parse(process.argv[2] ?? '{}') as RawTurnRequest;
const client = await startRawDroid({ binary: request.binary, cwd: request.cwd, home: request.home, settings: request.settings });
try {
  let sessionId = request.load;
  if (sessionId === undefined) {
    const init = (await client.request('droid.initialize_session', { machineId: 'bench', cwd: request.cwd, autonomyLevel: 'low' })) as {
      sessionId: string;
    };
    sessionId = init.sessionId;
    await client.request('droid.update_session_settings', { modelId: request.modelId, autonomyLevel: 'low' });
  } else {
    await client.request('droid.load_session', { sessionId });
  }
  await client.runTurn(request.load === undefined ? 'hello' : 'again');
  process.stdout.write(`${JSON.stringify({ sessionId, pid: client.pid })}\n`);
} finally {
  try {
    process.kill(-client.pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}
process.exit(0);
