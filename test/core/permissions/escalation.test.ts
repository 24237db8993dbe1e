import { describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../../core/adapter.js';
import { PermissionPolicySchema, createPermissionDecider, declineEscalator } from '../../../core/permissions/index.js';
import type { DecisionRecord, EscalationAnswer, Escalator } from '../../../core/permissions/index.js';
import { WORKSPACE, ask, edit, exec, question } from './ask-builders.js';

// A scripted escalator: answers in order and records what it was asked.
class FakeEscalator implements Escalator {
  readonly asked: Array<{ ask: PermissionAsk; reason: string }> = [];
  readonly #answers: EscalationAnswer[];
  constructor(...answers: EscalationAnswer[]) {
    this.#answers = answers;
  }
  async ask(a: PermissionAsk, proposal: { reason: string }): Promise<EscalationAnswer> {
    this.asked.push({ ask: a, reason: proposal.reason });
    const answer = this.#answers.shift();
    if (answer === undefined) throw new Error('the fake escalator ran out of answers');
    return answer;
  }
}

const policy = PermissionPolicySchema.parse({ allow: ['npm test'], deny: ['git push'] });

function decider(escalator: Escalator, records: DecisionRecord[] = []) {
  return createPermissionDecider({ policy, autonomy: 'low', workspace: WORKSPACE, escalator, onDecision: (r) => records.push(r) });
}

describe('createPermissionDecider', () => {
  it('decides allowed and denied asks by policy without asking anyone', async () => {
    const escalator = new FakeEscalator();
    const records: DecisionRecord[] = [];
    const decide = decider(escalator, records);
    await expect(decide(ask(exec('npm test')))).resolves.toEqual({
      decision: 'allow',
      by: 'policy',
      reason: "command 'npm test' is on the allowlist",
      escalated: false,
      choice: 'allow-once',
    });
    await expect(decide(ask(exec('git push')))).resolves.toMatchObject({ decision: 'deny', by: 'policy', escalated: false });
    expect(escalator.asked).toEqual([]);
    expect(records.map((r) => [r.policy.verdict, r.decision.decision])).toEqual([
      ['allow', 'allow'],
      ['deny', 'deny'],
    ]);
  });

  it('passes the escalation reason to the escalator and reports a person allowing', async () => {
    const escalator = new FakeEscalator({ decision: 'allow' });
    const result = await decider(escalator)(ask(exec('make build')));
    expect(escalator.asked[0]?.reason).toMatch(/'make build' is not on the allowlist/);
    expect(result).toMatchObject({ decision: 'allow', by: 'human', escalated: true });
    expect(result.reason).toMatch(/approved by a person/);
  });

  it('reports a person denying, with their reason when they give one', async () => {
    const escalator = new FakeEscalator({ decision: 'deny', reason: 'not now' });
    await expect(decider(escalator)(ask(exec('make build')))).resolves.toEqual({
      decision: 'deny',
      by: 'human',
      reason: 'not now',
      escalated: true,
      choice: 'deny',
    });
  });

  it('asks again next time unless the person said to remember', async () => {
    const escalator = new FakeEscalator({ decision: 'allow' }, { decision: 'allow', remember: true }, { decision: 'deny' });
    const decide = decider(escalator);
    expect(await decide(ask(exec('make build')))).toMatchObject({ choice: 'allow-once' });
    expect(await decide(ask(exec('make  build')))).toMatchObject({ choice: 'allow-session', sessionAllows: ['execute:make build'] });
    expect(escalator.asked).toHaveLength(2);
    await expect(decide(ask(exec('make build')))).resolves.toMatchObject({ decision: 'allow', by: 'policy', escalated: false });
    await expect(decide(ask(exec('make build --all')))).resolves.toMatchObject({ decision: 'deny', by: 'human' });
    expect(escalator.asked).toHaveLength(3);
  });

  it('remembers every tool of an approved batch, and never remembers a denial', async () => {
    const escalator = new FakeEscalator({ decision: 'deny', remember: true }, { decision: 'allow', remember: true });
    const decide = decider(escalator);
    const batch = () => ask(exec('make a'), edit('/ws/project/x.ts'));
    await expect(decide(batch())).resolves.toMatchObject({ decision: 'deny', by: 'human' });
    await expect(decide(batch())).resolves.toMatchObject({ decision: 'allow', by: 'human' });
    await expect(decide(ask(exec('make a')))).resolves.toMatchObject({ decision: 'allow', by: 'policy' });
    await expect(decide(ask(edit('/ws/project/x.ts')))).resolves.toMatchObject({ decision: 'allow', by: 'policy' });
    expect(escalator.asked).toHaveLength(2);
  });

  it('keeps remembered approvals per decider (per session)', async () => {
    await decider(new FakeEscalator({ decision: 'allow', remember: true }))(ask(exec('make a')));
    const other = new FakeEscalator({ decision: 'deny' });
    await expect(decider(other)(ask(exec('make a')))).resolves.toMatchObject({ decision: 'deny' });
    expect(other.asked).toHaveLength(1);
  });

  it('denies, by policy, when the escalator fails', async () => {
    const escalator: Escalator = { ask: async () => Promise.reject(new Error('prompt closed')) };
    await expect(decider(escalator)(ask(exec('make')))).resolves.toEqual({
      decision: 'deny',
      by: 'policy',
      reason: 'escalation failed, so denied: prompt closed',
      escalated: true,
    });
  });
});

describe('declineEscalator', () => {
  it('declines an escalated tool ask as a policy decision', async () => {
    const records: DecisionRecord[] = [];
    await expect(decider(declineEscalator, records)(ask(exec('make')))).resolves.toEqual({
      decision: 'deny',
      by: 'policy',
      reason: 'no person available to decide (not a TTY)',
      escalated: true,
      choice: 'deny',
    });
    expect(records[0]?.policy.verdict).toBe('escalate');
  });

  it('still lets the policy allow what it allows', async () => {
    await expect(decider(declineEscalator)(ask(exec('npm test')))).resolves.toMatchObject({ decision: 'allow', by: 'policy' });
  });

  it('declines questions instead of guessing answers', async () => {
    const result = await decider(declineEscalator)(question());
    expect(result).toEqual({ decision: 'deny', by: 'policy', reason: 'no person available to decide (not a TTY)', escalated: true });
  });
});

const A = (answer: string) => ({ index: 1, question: 'Which file?', answer });

describe('questions', () => {
  it('passes a person’s answers through', async () => {
    const escalator = new FakeEscalator({ decision: 'allow', answers: [A('src/a.ts')] });
    await expect(decider(escalator)(question())).resolves.toEqual({
      decision: 'allow',
      by: 'human',
      reason: 'answered by a person',
      answers: [A('src/a.ts')],
      escalated: true,
    });
    expect(escalator.asked[0]?.reason).toMatch(/questions/);
  });

  it('declines an allow that carries no answers', async () => {
    const escalator = new FakeEscalator({ decision: 'allow' }, { decision: 'allow', answers: [] });
    const decide = decider(escalator);
    await expect(decide(question())).resolves.toMatchObject({ decision: 'deny', by: 'human', reason: 'the person gave no answers' });
    await expect(decide(question())).resolves.toMatchObject({ decision: 'deny', by: 'human' });
  });

  it('declines answers that did not come from a person', async () => {
    const escalator = new FakeEscalator({ decision: 'allow', by: 'policy', answers: [A('guess')] });
    const result = await decider(escalator)(question());
    expect(result).toEqual({ decision: 'deny', by: 'policy', reason: 'questions are never answered without a person', escalated: true });
  });

  it('never remembers a question, so the next one is asked again', async () => {
    const escalator = new FakeEscalator({ decision: 'allow', remember: true, answers: [A('a')] }, { decision: 'deny' });
    const decide = decider(escalator);
    await decide(question());
    await expect(decide(question())).resolves.toMatchObject({ decision: 'deny', by: 'human' });
    expect(escalator.asked).toHaveLength(2);
  });
});
