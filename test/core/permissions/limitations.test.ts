import { describe, expect, it } from 'vitest';
import type { AdapterLimitation } from '../../../core/adapter.js';
import { describeLimitation, limitationsInEffect, PermissionPolicySchema, rulesInEffect } from '../../../core/permissions/index.js';

const policy = (input: Record<string, unknown> = {}) => PermissionPolicySchema.parse(input);

const subagents: AdapterLimitation = {
  tools: ['Task'],
  kind: 'subagent',
  defeats: ['deny', 'denyPaths', 'autonomy'],
  reason: 'it never asks',
};
const fetches: AdapterLimitation = { tools: ['FetchUrl'], kind: 'fetch', defeats: ['deny'], reason: 'no hook' };

describe('limitations in effect', () => {
  it('counts deny and denyPaths only when they list something, autonomy below high, and the write boundary always', () => {
    expect(rulesInEffect(policy(), 'high')).toEqual(['writeBoundary']);
    expect(rulesInEffect(policy(), 'low')).toEqual(['writeBoundary', 'autonomy']);
    expect(rulesInEffect(policy({ deny: ['git push'], denyPaths: ['/etc'] }), 'medium')).toEqual([
      'deny',
      'denyPaths',
      'writeBoundary',
      'autonomy',
    ]);
  });

  it('returns the limitations that defeat a rule in effect, with those rules only', () => {
    expect(limitationsInEffect([subagents, fetches], policy(), 'high')).toEqual([]);
    expect(limitationsInEffect([subagents, fetches], policy(), 'off')).toEqual([{ limitation: subagents, rules: ['autonomy'] }]);
    expect(limitationsInEffect([subagents, fetches], policy({ deny: ['rm'] }), 'high')).toEqual([
      { limitation: subagents, rules: ['deny'] },
      { limitation: fetches, rules: ['deny'] },
    ]);
  });

  it('says what escapes, which rules of the session it defeats and why', () => {
    expect(describeLimitation('droid', { limitation: subagents, rules: ['deny', 'autonomy'] })).toBe(
      "droid runs Task (subagent) calls without asking One Works, so this session's deny, autonomy rules do not hold for them: it never asks",
    );
    expect(describeLimitation('x', { limitation: fetches, rules: ['deny'] })).toContain("this session's deny rule does not hold");
  });
});
