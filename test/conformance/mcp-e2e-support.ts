import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client as McpClient, type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import { type CliRig, ONE_WORKS_BIN } from '../support/one-works-cli.js';
import { SCRIPTED_MODEL_ID, toolResults } from '../support/scripted-model.js';
import { waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';

// Shared by the end-to-end MCP tests (mcp-*.test.ts): scripted replies, tool
// calls through a real SDK client, and stopping the orchestrator the MCP server auto-started.

/** A free TCP port on 127.0.0.1 (bound once on :0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const sleeper = (id: string, seconds: number) => (request: Parameters<typeof toolResults>[0]) =>
  toolResults(request).length > 0 ? { text: `${id} slept` } : executeStep(id, `sleep ${seconds}`);

/** How long the model takes to answer jobs B and C, so that the two runs surely overlap. */
const PARALLEL_REPLY_MS = 3_000;

/**
 * The scripted model's replies, chosen by prompt: short jobs (B and C answer after a wait), and a
 * long job running `sleep 30`. Rigs for exerciseTools use {@link MCP_RIG_ORCHESTRATOR}.
 */
export const MCP_SCRIPT = byPrompt({
  'job A follow-up': () => ({ text: 'A again' }),
  'job A': () => ({ text: 'A done' }),
  'job B': () => ({ text: 'B done', delayMs: PARALLEL_REPLY_MS }),
  'job C': () => ({ text: 'C done', delayMs: PARALLEL_REPLY_MS }),
  'long job': sleeper('call_mcp_long_1', 30),
});

/** The rig settings exerciseTools expects: droid's default autonomy high, two runs at once. */
export const MCP_RIG_DROID = { autonomy: 'high' };
export const MCP_RIG_ORCHESTRATOR = { cancelGraceMs: 2_000, maxConcurrentRuns: 2 };

/** Calls a tool and returns its structuredContent, failing the test on an isError result. */
export async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

/** Calls a tool that must fail and returns its structured error. */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ code: string; message: string; retryable: boolean; action: string }> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  return (result.structuredContent as { error: { code: string; message: string; retryable: boolean; action: string } }).error;
}

/** The pid of the state directory's orchestrator (`<state>/owner.json`). */
export async function ownerPid(stateDir: string): Promise<number> {
  return (JSON.parse(await readFile(join(stateDir, 'owner.json'), 'utf8')) as { pid: number }).pid;
}

/**
 * SIGTERMs the orchestrator the MCP server auto-started and checks that it exited. It was
 * spawned detached by the MCP server, which has exited by now, so its parent is init: where
 * init does not reap (a container), it stays a zombie and signal 0 still reaches it, hence
 * waitForExit (which counts a zombie as exited) rather than an ESRCH check.
 */
export async function stopOrchestrator(stateDir: string): Promise<void> {
  const pid = await ownerPid(stateDir);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Already exited (idle exit after the MCP server's connection closed).
  }
  expect(await waitForExit([pid], 30_000)).toEqual([]);
}

/** Waits for a child of this process to exit and be reaped: signal 0 then fails with ESRCH. */
export async function expectReaped(pid: number): Promise<void> {
  expect(await waitForExit([pid], 10_000)).toEqual([]);
  await expect
    .poll(() => {
      try {
        process.kill(pid, 0);
        return 'alive';
      } catch (error) {
        return (error as NodeJS.ErrnoException).code;
      }
    })
    .toBe('ESRCH');
}

interface Handle {
  sessionId: string;
  runId: string;
  state: string;
  settings: { model?: string; autonomy: string };
}
interface Summary {
  sessionId: string;
  state: string;
  latestRun?: { runId: string; status: string };
  title?: string;
  labels?: string[];
}
interface Run {
  runId: string;
  status: string;
  text?: string;
  startedAt?: string;
  endedAt?: string;
  settings: { autonomy: string };
}
interface Waited {
  settled: Summary[];
  pending: Summary[];
  timedOut: boolean;
}

/**
 * The whole tool surface against the real droid, through one MCP client: orientation, an
 * idempotent create and a request-key conflict, parallel sessions, wait, read, a follow-up,
 * metadata, a cancel during a long `sleep` tool, usage. Returns every whole result seen
 * (structuredContent, text content, error results), for checks on what left the server (native ids).
 */
export async function exerciseTools(client: Client, rig: CliRig): Promise<unknown[]> {
  const seen: unknown[] = [];
  const watched = {
    callTool: async (...args: Parameters<Client['callTool']>) => {
      const result = await client.callTool(...args);
      seen.push(result);
      return result;
    },
  } as Client;
  const use = <T>(name: string, args: Record<string, unknown>): Promise<T> => call<T>(watched, name, args);
  const [a, b, c, d] = (await Promise.all(
    ['a', 'b', 'c', 'd'].map(async (name) => {
      const dir = join(rig.workspace, name);
      await mkdir(dir);
      return dir;
    }),
  )) as [string, string, string, string];

  expect((await client.listTools()).tools).toHaveLength(18);
  expect(await use('list_workspaces', {})).toMatchObject({
    approvedRoots: [rig.workspace],
    capacity: { limits: { maxConcurrentRuns: MCP_RIG_ORCHESTRATOR.maxConcurrentRuns } },
    adapters: [{ name: 'droid', model: SCRIPTED_MODEL_ID, autonomy: 'high' }],
  });
  expect((await use<{ models: { id: string }[] }>('models', {})).models.map((m) => m.id)).toContain(SCRIPTED_MODEL_ID);

  // Idempotent create: the same key and arguments replay the handle; other arguments conflict.
  // Autonomy off, unlike the host default (high), so that the follow-up shows inheritance.
  const createA = { requestKey: 'key-a', workspace: a, prompt: 'job A', title: 'Job A', labels: ['mcp'], autonomy: 'off' };
  const first = await use<Handle>('create_session', createA);
  expect(first).toMatchObject({ runId: 'r1', settings: { model: SCRIPTED_MODEL_ID, autonomy: 'off' } });
  expect(await use<Handle>('create_session', createA)).toEqual(first);
  expect(await callError(watched, 'create_session', { ...createA, prompt: 'job B' })).toMatchObject({
    code: 'request_key_conflict',
    retryable: false,
  });
  expect(await callError(watched, 'create_session', { workspace: '/', prompt: 'job B' })).toMatchObject({ code: 'workspace_not_approved' });

  // Parallel sessions in two workspaces: both runs started before either ended.
  const [second, third] = await Promise.all([
    use<Handle>('create_session', { workspace: b, prompt: 'job B' }),
    use<Handle>('create_session', { workspace: c, prompt: 'job C' }),
  ]);
  const ids = [first.sessionId, second.sessionId, third.sessionId];
  expect(new Set(ids).size).toBe(3);
  const done = await waitSettled(use, ids);
  expect(done.settled.map((s) => [s.sessionId, s.latestRun?.status]).sort()).toEqual(ids.map((id) => [id, 'completed']).sort());
  const runs = await Promise.all(
    [second, third].map(async (h) => (await use<{ latestRun: Run }>('read_session', { session: h.sessionId })).latestRun),
  );
  const starts = runs.map((r) => r.startedAt ?? 'missing');
  const ends = runs.map((r) => r.endedAt ?? 'missing');
  expect([...starts, ...ends]).not.toContain('missing');
  for (const start of starts) for (const end of ends) expect(start < end, `started ${start}, ended ${end}`).toBe(true);

  const read = await use<{ latestRun: Run; events: { type: string }[] }>('read_session', { session: first.sessionId, maxEvents: 20 });
  expect(read.latestRun).toMatchObject({ status: 'completed', text: 'A done', settings: { autonomy: 'off' } });
  expect(read.events.map((e) => e.type)).toContain('turn.completed');
  expect(read.events.every((e) => !('key' in e))).toBe(true);

  // A follow-up inherits the session's settings (autonomy off), not the host default (high).
  const follow = await use<Handle>('send_message', { session: first.sessionId, prompt: 'job A follow-up', requestKey: 'key-a2' });
  expect(follow).toMatchObject({ sessionId: first.sessionId, runId: 'r2', settings: { model: SCRIPTED_MODEL_ID, autonomy: 'off' } });
  await waitSettled(use, [first.sessionId]);
  expect(await use('read_session', { session: first.sessionId })).toMatchObject({
    latestRun: { runId: 'r2', status: 'completed', text: 'A again', settings: { autonomy: 'off' } },
  });

  // Metadata: find by label, archive hides it.
  expect((await use<{ sessions: Summary[] }>('find_sessions', { label: 'mcp' })).sessions.map((s) => s.sessionId)).toEqual([
    first.sessionId,
  ]);
  expect(await use('update_session', { session: first.sessionId, archived: true })).toMatchObject({ archived: true });
  expect((await use<{ sessions: Summary[] }>('find_sessions', { label: 'mcp' })).sessions).toEqual([]);

  // Cancel during a long tool: a short wait times out without an error, then cancel interrupts it.
  const long = await use<Handle>('create_session', { workspace: d, prompt: 'long job' });
  await until(() => rig.processes().some((p) => p.args === 'sleep 30'));
  const short = await use<Waited>('wait_for_sessions', { sessions: [long.sessionId], timeoutSeconds: 0.5 });
  expect(short).toMatchObject({ timedOut: true, pending: [{ sessionId: long.sessionId, state: 'working' }] });
  expect(await use('cancel_session', { session: long.sessionId })).toMatchObject({
    sessionId: long.sessionId,
    state: 'idle',
    latestRun: { runId: 'r1', status: 'interrupted' },
  });
  // The tool's process is gone once cancel_session has returned (the orchestrator still runs).
  expect(rig.processes().filter((p) => p.args === 'sleep 30')).toEqual([]);
  expect(await use('session_status', { session: long.sessionId })).toMatchObject({ latestRun: { status: 'interrupted' } });

  expect(await use('usage', {})).toMatchObject({ total: { reported: expect.any(Boolean) } });
  return seen;
}

async function waitSettled(use: <T>(name: string, args: Record<string, unknown>) => Promise<T>, sessions: string[]): Promise<Waited> {
  for (;;) {
    // Under the SDK client's 60 s request timeout.
    const result = await use<Waited>('wait_for_sessions', { sessions, timeoutSeconds: 45 });
    if (!result.timedOut) return result;
  }
}

/** The native session ids droid gave the rig's sessions (from the records on disk). */
export async function nativeIds(rig: CliRig): Promise<string[]> {
  const ids: string[] = [];
  for (const id of await rig.sessionIds()) {
    const native = (await rig.readSession(id)).nativeSessionId;
    if (native) ids.push(native);
  }
  return ids;
}

/**
 * Two turns of one session of `adapter` through `one-works mcp` (a real MCP client on stdio): MCP
 * `create_session` with the adapter, `wait_for_sessions`, `send_message`, `wait_for_sessions` again,
 * then `read_session` shows both scripted answers ("MCP says hi.", "Second MCP answer.") and no rig
 * key; the record names the adapter with two completed runs; the MCP server exits with its client,
 * and after the orchestrator is stopped no process is left. The caller checks its model's requests.
 */
export async function twoTurnsOverMcp(rig: CliRig, adapter: string, expectedModel: string): Promise<void> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
    env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
    cwd: rig.root,
    stderr: 'pipe',
  });
  const client = new McpClient({ name: 'conformance', version: '0' });
  await client.connect(transport);
  const mcpPid = transport.pid!;
  try {
    const handle = await call<{ sessionId: string; settings: { model?: string } }>(client, 'create_session', {
      workspace: rig.workspace,
      prompt: `hello ${adapter}`,
      adapter,
    });
    expect(handle.settings.model).toBe(expectedModel);
    const waited = await call<{ timedOut: boolean }>(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 });
    expect(waited.timedOut).toBe(false);
    await call(client, 'send_message', { session: handle.sessionId, prompt: 'and again' });
    expect(
      (await call<{ timedOut: boolean }>(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 })).timedOut,
    ).toBe(false);
    const text = JSON.stringify(await call<Record<string, unknown>>(client, 'read_session', { session: handle.sessionId }));
    expect(text).toContain('MCP says hi.');
    expect(text).toContain('Second MCP answer.');
    expect(text).toContain(adapter);
    expect(text).not.toContain('sk-rig-secret');
  } finally {
    await client.close();
  }
  const [id] = await rig.sessionIds();
  const record = await rig.readSession(id!);
  expect(record.adapter).toBe(adapter);
  expect(record.runs.map((r) => r.status)).toEqual(['completed', 'completed']);
  await expectReaped(mcpPid);
  await stopOrchestrator(rig.stateDir);
  expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
}
