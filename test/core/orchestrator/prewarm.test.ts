import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { type OrchestratorHarness, useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// Prewarming is core's (the orchestrator's); it runs on the in-memory fake adapter (its `start`
// negotiates without a prompt), whose log says which agents were opened, prompted and closed.

// A window no test outlasts: only what a test does closes these agents.
const LONG_MS = 600_000;

// A harness whose orchestrator keeps `prewarm` agents, with its log lines collected.
async function prewarming(prewarm: number, keepWarmMs = LONG_MS): Promise<{ h: OrchestratorHarness; log: string[] }> {
  const log: string[] = [];
  const h = await harnesses({ fake: {}, limits: { keepWarmMs, prewarm }, deps: { log: (line) => log.push(line) } });
  return { h, log };
}

// Runs one turn in a new session in workspace `name` and waits for its outcome.
async function newSession(h: OrchestratorHarness, name: string, autonomy: 'low' | 'high' = 'low'): Promise<string> {
  const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir(name), prompt: `hello ${name}`, autonomy });
  expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
  return handle.sessionId;
}

// The prewarmed agents once `count` of them are up and negotiated.
async function readyAgents(h: OrchestratorHarness, count: number): Promise<Array<{ sessionId: string; pid: number }>> {
  const ready = () => h.orchestrator.prewarmedAgents().filter((agent) => agent.state === 'ready');
  await h.until(() => ready().length === count);
  return ready().map((agent) => ({ sessionId: agent.sessionId, pid: agent.pid! }));
}

function ofType(events: RuntimeEvent[], type: RuntimeEvent['type']): RuntimeEvent[] {
  return events.filter((event) => event.type === type);
}

describe('prewarmed agents (orchestrator.prewarm)', () => {
  it('gives the next new session like the last one the prewarmed agent: no spawn, no handshake for it', async () => {
    const { h } = await prewarming(1);
    const a = await newSession(h, 'ws');
    const [agent] = await readyAgents(h, 1);
    const fake = h.fake!.log;
    expect(fake.opened.map((spec) => spec.sessionId)).toEqual([a, agent!.sessionId]);
    expect(agent!.pid).toEqual(expect.any(Number));
    // Not a session before one takes it: no listing shows it.
    expect((await h.session.store.listSessions()).map((record) => record.id)).toEqual([a]);

    const b = await newSession(h, 'ws');
    expect(b).toBe(agent!.sessionId);
    // B's turn ran in the prewarmed agent (it is alive and holds B's conversation): none was opened for B.
    expect(fake.opened.filter((spec) => spec.sessionId === b)).toHaveLength(1);
    expect(fake.closed).not.toContain(b);
    expect(fake.prompts.map((p) => [p.sessionId, p.input.text])).toEqual([
      [a, 'hello ws'],
      [b, 'hello ws'],
    ]);
    const logged = await h.session.logged(b);
    expect(ofType(logged, 'session.started')).toHaveLength(1);
    expect(ofType(logged, 'turn.completed')).toHaveLength(1);
    expect(ofType(logged, 'session.closed')).toEqual([]);
    const record = await h.session.store.readSession(b);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([['r1', 'completed']]);
    expect(record.nativeSessionId).toEqual(expect.any(String));
    expect(record.cliVersion).toEqual(expect.any(String));
    // After B's turn, a new agent is prewarmed: three launches in all, two prompts.
    await readyAgents(h, 1);
    expect(fake.opened).toHaveLength(3);
    expect(fake.opened.every((spec) => spec.nativeSessionId === undefined)).toBe(true);
    expect(fake.prompts).toHaveLength(2);
  });

  it('closes a prewarmed agent not used within its window, records it, and leaves no trace in the state', async () => {
    const { h, log } = await prewarming(1, 500);
    const a = await newSession(h, 'ws');
    const [agent] = await readyAgents(h, 1);
    await h.until(() => h.orchestrator.prewarmedAgents().length === 0);
    await h.until(() => h.fake!.log.closed.includes(agent!.sessionId));
    expect(h.fake!.log.prompts.map((p) => p.sessionId)).toEqual([a]);
    expect(log).toContain(`prewarmed agent ${agent!.sessionId} (pid ${agent!.pid}) closed: unused`);
    expect(existsSync(join(h.deps.stateDir, 'sessions', agent!.sessionId))).toBe(false);
    expect((await h.session.store.listSessions()).map((record) => record.id)).toEqual([a]);
  });

  it('does not give the agent to a session with other settings, and prewarms for the most recent one instead', async () => {
    const { h, log } = await prewarming(1);
    await newSession(h, 'ws');
    const [first] = await readyAgents(h, 1);
    const other = await newSession(h, 'ws', 'high');
    expect(other).not.toBe(first!.sessionId);
    await h.until(() => h.orchestrator.prewarmedAgents().every((agent) => agent.sessionId !== first!.sessionId));
    expect(log).toContain(`prewarmed agent ${first!.sessionId} (pid ${first!.pid}) closed: replaced`);
    const [second] = await readyAgents(h, 1);
    expect(second!.sessionId).not.toBe(first!.sessionId);
    // The next session like the most recent one (autonomy high) takes the new agent.
    expect(await newSession(h, 'ws', 'high')).toBe(second!.sessionId);
  });

  it('replaces a prewarmed agent killed from outside before the turn reaches it; the turn completes', async () => {
    const { h } = await prewarming(1);
    await newSession(h, 'ws');
    const [agent] = await readyAgents(h, 1);
    h.fake!.crash(agent!.sessionId);
    const b = await newSession(h, 'ws');
    const logged = await h.session.logged(b);
    expect(ofType(logged, 'session.closed')).toMatchObject([{ reason: 'agent_gone' }]);
    expect(ofType(logged, 'session.started')).toHaveLength(2);
    expect(ofType(logged, 'error')).toEqual([]);
  });

  it('drains the prewarmed agents on a config change and prewarms none after it', async () => {
    const { h, log } = await prewarming(2);
    await newSession(h, 'ws');
    const agents = await readyAgents(h, 2);
    await h.orchestrator.drainWarmAgents('config_changed');
    expect(h.orchestrator.prewarmedAgents()).toEqual([]);
    for (const agent of agents) {
      expect(h.fake!.log.closed).toContain(agent.sessionId);
      expect(log).toContain(`prewarmed agent ${agent.sessionId} (pid ${agent.pid}) closed: config_changed`);
    }
    const b = await newSession(h, 'ws');
    expect(agents.map((agent) => agent.sessionId)).not.toContain(b);
    expect(h.orchestrator.prewarmedAgents()).toEqual([]);
  });

  it('closes every prewarmed agent on shutdown with no orphan', async () => {
    const { h, log } = await prewarming(2);
    await newSession(h, 'ws');
    const agents = await readyAgents(h, 2);
    await h.orchestrator.shutdown();
    expect(h.fake!.log.open()).toBe(0);
    for (const agent of agents) {
      expect(h.fake!.log.closed).toContain(agent.sessionId);
      expect(log).toContain(`prewarmed agent ${agent.sessionId} (pid ${agent.pid}) closed: shutdown`);
      expect(existsSync(join(h.deps.stateDir, 'sessions', agent.sessionId))).toBe(false);
    }
    // dispose (shutdown again) is idempotent.
    await h.dispose();
  });

  it('logs a prewarm start that failed with the session secrets redacted, keeps no agent, and the next session still runs', async () => {
    const SECRET = 'sk-prewarm-7f3a91c2';
    const log: string[] = [];
    const h = await harnesses({
      fake: { failStart: `the agent refused the key ${SECRET}` },
      secrets: [SECRET],
      limits: { keepWarmMs: LONG_MS, prewarm: 1 },
      deps: { log: (line) => log.push(line) },
    });
    const a = await newSession(h, 'ws');
    await h.until(() => log.some((line) => line.includes('could not start')));
    const failed = log.filter((line) => line.includes('could not start'));
    expect(failed[0]).toMatch(/^prewarmed agent s-\S+ \(fake\) could not start: the agent refused the key /);
    expect(log.filter((line) => line.includes(SECRET))).toEqual([]);
    await h.until(() => h.orchestrator.prewarmedAgents().length === 0);
    // The failed agent was closed and left nothing in the state.
    const prewarmedId = h.fake!.log.opened[1]!.sessionId;
    await h.until(() => h.fake!.log.closed.includes(prewarmedId));
    expect(existsSync(join(h.deps.stateDir, 'sessions', prewarmedId))).toBe(false);
    const b = await newSession(h, 'ws');
    expect(b).not.toBe(prewarmedId);
    expect((await h.session.store.listSessions()).map((record) => record.id).sort()).toEqual([a, b].sort());
  });
});
