import { describe, expect, it } from 'vitest';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

// The orchestrator's side of answers from anywhere: `send --allow/--deny` joining the session's
// policy, and a person resolving needs-attention.

const harnesses = useOrchestratorHarnesses();

describe('orchestrator: session policy from send, resolving attention', () => {
  it('merges a send’s policy into the session record, keeping the policy given at creation', async () => {
    const h = await harnesses({ fake: {} });
    const created = await h.orchestrator.createSession({
      adapter: 'fake',
      workspace: h.root,
      prompt: 'one',
      policy: { allow: ['npm test'], deny: [], denyPaths: [], writeBoundary: [] },
    });
    await h.orchestrator.waitForRun(created.sessionId, created.runId);
    const sent = await h.orchestrator.sendMessage({
      sessionId: created.sessionId,
      prompt: 'two',
      policy: { allow: ['npm test', 'make'], deny: ['git push'], denyPaths: [], writeBoundary: [] },
    });
    await h.orchestrator.waitForRun(sent.sessionId, sent.runId);
    expect((await h.deps.store.readSession(created.sessionId)).policy).toEqual({
      allow: ['npm test', 'make'],
      deny: ['git push'],
      denyPaths: [],
      writeBoundary: [],
    });
  });

  it('refuses to resolve a session that does not need attention', async () => {
    const h = await harnesses({ fake: {} });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    await h.orchestrator.waitForRun(created.sessionId, created.runId);
    await expect(h.orchestrator.resolveAttention(created.sessionId, 'x')).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('does not need attention'),
    });
  });
});
