import { describe, expect, it } from 'vitest';
import { ofType } from '../../support/session-harness.js';
import { useOrchestratorHarnesses } from '../../core/orchestrator/orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// droid's wire for titles and tags (initialize_session tags, rename_session) through the orchestrator,
// on the fake droid peer.

describe('orchestrator: native title and tags', () => {
  it('sends labels as tags when the native session is created and renames a titled session after its first turn only', async () => {
    const h = await harnesses();
    const handle = await h.orchestrator.createSession({
      adapter: 'droid',
      workspace: h.root,
      prompt: 'one',
      title: 'Fix CI',
      labels: ['team:infra', 'ci'],
    });
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    const second = await h.orchestrator.sendMessage({ sessionId: handle.sessionId, prompt: 'two' });
    expect(await h.orchestrator.waitForRun(handle.sessionId, second.runId)).toMatchObject({ status: 'completed' });

    const frames = await h.session.received();
    const init = frames.filter((f) => f.method === 'droid.initialize_session');
    expect(init).toHaveLength(1);
    expect(init[0]!.params).toMatchObject({ title: 'Fix CI', tags: [{ name: 'team:infra' }, { name: 'ci' }] });
    const renames = frames.filter((f) => f.method === 'droid.rename_session');
    expect(renames).toHaveLength(1);
    expect(JSON.stringify(renames[0]!.params)).toContain('Fix CI');

    // The fake droid does not play rename_session: the failure is a log line, never the outcome.
    const logged = await h.session.logged(handle.sessionId);
    expect(ofType(logged, 'log').some((e) => e.level === 'warn' && e.message.includes('native rename'))).toBe(true);
    const record = await h.session.store.readSession(handle.sessionId);
    expect(record).toMatchObject({
      title: 'Fix CI',
      labels: ['team:infra', 'ci'],
      status: 'idle',
      runs: [{ status: 'completed' }, { status: 'completed' }],
    });
  });

  it('renames nothing and sends no tags for a session without title and labels', async () => {
    const h = await harnesses();
    const handle = await h.orchestrator.createSession({ adapter: 'droid', workspace: h.root, prompt: 'one' });
    await h.orchestrator.waitForRun(handle.sessionId, handle.runId);
    const frames = await h.session.received();
    expect(frames.some((f) => f.method === 'droid.rename_session')).toBe(false);
    expect(frames.find((f) => f.method === 'droid.initialize_session')!.params).not.toHaveProperty('tags');
  });
});
