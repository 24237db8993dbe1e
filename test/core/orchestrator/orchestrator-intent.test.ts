import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type IntentFacts, matchesIntent } from '../../../core/orchestrator/index.js';
import { type OrchestratorHarness, useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// An intent (what a `run` is about to create, told before its createSession) starts the agent at
// once, on the in-memory fake adapter whose log says which agents were opened and closed. Only a
// createSession that matches the intent takes that agent; anything else discards it.

async function harness(intentWindowMs?: number): Promise<{ h: OrchestratorHarness; logged: string[] }> {
  const logged: string[] = [];
  const h = await harnesses({
    fake: {},
    deps: {
      defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
      defaultAdapter: 'fake',
      log: (message) => logged.push(message),
      ...(intentWindowMs === undefined ? {} : { intentWindowMs }),
    },
  });
  return { h, logged };
}

const sessionDir = (h: OrchestratorHarness, id: string): string => join(h.deps.stateDir, 'sessions', id);

describe('matchesIntent', () => {
  const intent: IntentFacts = {
    adapter: 'droid',
    workspace: '/w',
    model: 'm',
    effort: 'high',
    autonomy: 'low',
    title: 't',
    labels: ['a', 'b'],
    presentation: { TERM: 'xterm' },
  };

  it('matches the same facts, with none and empty taken as the same', () => {
    expect(matchesIntent(intent, { ...intent })).toBe(true);
    expect(matchesIntent(intent, { ...intent, labels: ['a', 'b', 'a'] })).toBe(true);
    expect(
      matchesIntent({ adapter: 'droid', workspace: '/w' }, { adapter: 'droid', workspace: '/w', title: '', labels: [], presentation: {} }),
    ).toBe(true);
  });

  it.each<[string, Partial<IntentFacts>]>([
    ['adapter', { adapter: 'claude-code' }],
    ['workspace', { workspace: '/other' }],
    ['model', { model: 'n' }],
    ['model left out', { model: undefined }],
    ['effort', { effort: 'low' }],
    ['autonomy', { autonomy: 'high' }],
    ['title', { title: 'u' }],
    ['labels', { labels: ['a'] }],
    ['label order', { labels: ['b', 'a'] }],
    ['presentation', { presentation: { TERM: 'dumb' } }],
    ['presentation added', { presentation: { TERM: 'xterm', NO_COLOR: '1' } }],
  ])('does not match a request with another %s', (_name, change) => {
    expect(matchesIntent(intent, { ...intent, ...change })).toBe(false);
  });
});

describe('orchestrator: the agent of an intent', () => {
  it('starts at once, nothing stored, and the matching createSession takes it: one agent', async () => {
    const { h, logged } = await harness();
    const started = await h.orchestrator.startIntent({ workspace: h.root, title: 'job', presentation: { TERM: 'xterm' } });
    const intentId = started.intentId!;
    expect(intentId).toMatch(/^s-/);
    await h.until(() => h.fake!.log.opened.length === 1);
    expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([intentId]);
    expect(await h.session.store.listSessions()).toEqual([]);

    const handle = await h.orchestrator.createSession(
      { adapter: 'fake', workspace: h.root, prompt: 'hello', title: 'job', presentation: { TERM: 'xterm' } },
      { intentId },
    );
    expect(handle.sessionId).toBe(intentId);
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(h.fake!.log.opened).toHaveLength(1);
    expect(h.fake!.log.prompts.map((p) => [p.sessionId, p.input.text])).toEqual([[intentId, 'hello']]);
    expect(await h.session.store.readSession(intentId)).toMatchObject({ title: 'job', nativeSessionId: `fake-${intentId}` });
    expect(logged).toContain(`intent: session ${intentId} takes the agent started for its intent`);
  });

  it.each<[string, Record<string, unknown>]>([
    ['another model', { model: 'small' }],
    ['another title', { title: 'other' }],
    ['other presentation variables', { presentation: { TERM: 'dumb' } }],
    ['labels', { labels: ['x'] }],
  ])('is discarded when the createSession asks for %s: the session gets an agent of its own', async (_name, change) => {
    const { h, logged } = await harness();
    const { intentId } = await h.orchestrator.startIntent({ workspace: h.root, presentation: { TERM: 'xterm' } });
    await h.until(() => h.fake!.log.opened.length === 1);

    const handle = await h.orchestrator.createSession(
      { adapter: 'fake', workspace: h.root, prompt: 'hello', presentation: { TERM: 'xterm' }, ...change },
      { intentId: intentId! },
    );
    expect(handle.sessionId).not.toBe(intentId);
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    await h.until(() => h.fake!.log.closed.includes(intentId!) && !existsSync(sessionDir(h, intentId!)));
    expect(h.fake!.log.prompts.map((p) => p.sessionId)).toEqual([handle.sessionId]);
    expect((await h.orchestrator.list()).map((s) => s.sessionId)).toEqual([handle.sessionId]);
    expect(logged).toContain(`intent: the agent of session ${intentId} is discarded: its createSession asked for something else`);
  });

  it('is discarded when a createSession given it is refused, and nothing of it remains', async () => {
    const { h } = await harness();
    const { intentId } = await h.orchestrator.startIntent({ workspace: h.root });
    await h.until(() => h.fake!.log.opened.length === 1);
    await expect(
      h.orchestrator.createSession({ adapter: 'fake', workspace: join(h.root, '..'), prompt: 'hello' }, { intentId: intentId! }),
    ).rejects.toMatchObject({ code: 'workspace_not_approved' });
    expect(h.fake!.log.closed).toEqual([intentId]);
    expect(existsSync(sessionDir(h, intentId!))).toBe(false);
    expect(await h.orchestrator.list()).toEqual([]);
  });

  it('is discarded by dropIntent (its client went away) and when its window passes', async () => {
    const { h, logged } = await harness(200);
    const first = (await h.orchestrator.startIntent({ workspace: h.root })).intentId!;
    await h.until(() => h.fake!.log.opened.length === 1);
    await h.orchestrator.dropIntent(first, 'its client went away');
    expect(h.fake!.log.closed).toEqual([first]);
    expect(existsSync(sessionDir(h, first))).toBe(false);

    const second = (await h.orchestrator.startIntent({ workspace: h.root })).intentId!;
    await h.until(() => h.fake!.log.closed.includes(second) && !existsSync(sessionDir(h, second)));
    expect(logged).toContain(`intent: the agent of session ${second} is discarded: not used within 200 ms`);
    // Gone: a createSession given its id runs with an agent of its own.
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'late' }, { intentId: second });
    expect(handle.sessionId).not.toBe(second);
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(h.fake!.log.open()).toBe(0);
  });

  it('starts nothing for a workspace outside the approved roots', async () => {
    const { h } = await harness();
    const started = await h.orchestrator.startIntent({ workspace: join(h.root, '..') });
    expect(started.intentId).toBeUndefined();
    expect(started.reason).toMatch(/approved/);
    expect(h.fake!.log.opened).toEqual([]);
  });

  it('is discarded by shutdown', async () => {
    const { h } = await harness();
    const { intentId } = await h.orchestrator.startIntent({ workspace: h.root });
    await h.until(() => h.fake!.log.opened.length === 1);
    await h.orchestrator.shutdown();
    expect(h.fake!.log.closed).toEqual([intentId]);
    expect(existsSync(sessionDir(h, intentId!))).toBe(false);
  });
});
