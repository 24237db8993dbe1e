import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../../core/adapter.js';
import { PermissionPolicySchema, decidePermission, rememberKey } from '../../../core/permissions/index.js';
import type { AskedTool, PolicyContext } from '../../../core/permissions/index.js';
import { WORKSPACE } from './ask-builders.js';

// Generators over a small vocabulary so that allow/deny prefixes and commands actually meet.
const WORDS = ['npm', 'test', 'git', 'push', 'status', 'rm', '-rf', '/', 'echo', 'x', 'sudo', 'FOO=1', "'push'"];
const OPERATORS = [' && ', ' || ', '; ', ' | ', '\n', ' & ', ' > out ', ' 2>&1 ', ' $(', ') '];
// Operators after which the next words are a new command.
const SEPARATORS = [' && ', ' || ', '; ', ' | ', '\n', ' & ', ' $(', ' `'];
const LEVELS = ['off', 'low', 'medium', 'high'] as const;

const phrase = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));
const command = fc.array(fc.tuple(phrase, fc.constantFrom(...OPERATORS)), { minLength: 1, maxLength: 3 }).map((parts) =>
  parts
    .map(([p, op]) => p + op)
    .join('')
    .trim(),
);
const absolutePath = fc
  .tuple(fc.constantFrom('/ws/project', '/ws/project-b', '/etc', '/data', '/'), fc.constantFrom('', '/a', '/b/c', '/../d'))
  .map(([root, rest]) => root + rest);
const kind = fc.constantFrom('execute', 'read', 'edit', 'search', 'fetch', 'other', 'mystery');

const askedTool: fc.Arbitrary<AskedTool> = fc.record({
  toolUseId: fc.uuid(),
  name: fc.constantFrom('Execute', 'Edit', 'Read', 'Fetch', 'mcp__x__y'),
  kind,
  label: fc.constant('tool'),
  command: fc.option(command, { nil: undefined }),
  paths: fc.option(fc.array(fc.oneof(absolutePath, fc.constant('rel/p')), { maxLength: 3 }), { nil: undefined }),
  input: fc.constant({}),
});

const policy = fc
  .record({
    allow: fc.array(phrase, { maxLength: 3 }),
    deny: fc.array(phrase, { maxLength: 3 }),
    denyPaths: fc.array(absolutePath, { maxLength: 2 }),
    writeBoundary: fc.array(absolutePath, { maxLength: 2 }),
  })
  .map((p) => PermissionPolicySchema.parse(p));

const askOf = (tools: AskedTool[], kindOfAsk: 'tool' | 'question' = 'tool'): PermissionAsk => ({
  requestId: 'r',
  kind: kindOfAsk,
  tools,
  options: [],
});

// Remembered keys drawn from the tools themselves, so remembered approvals are exercised too.
const remembered = (tools: AskedTool[], picks: boolean[]): Set<string> =>
  new Set(tools.flatMap((t, i) => (picks[i] ? [rememberKey(t)] : [])).filter((k): k is string => k !== undefined));

describe('policy properties', () => {
  it('never allows a tool whose command matches a deny prefix, whatever else holds', () => {
    fc.assert(
      fc.property(
        policy,
        phrase,
        fc.string({ maxLength: 12 }).map((s) => s.replace(/\s/g, '')),
        command,
        fc.constantFrom(...SEPARATORS),
        fc.boolean(),
        fc.array(askedTool, { maxLength: 3 }),
        fc.constantFrom(...LEVELS),
        fc.array(fc.boolean(), { maxLength: 4 }),
        (base, denied, suffix, other, operator, denyFirst, others, autonomy, picks) => {
          const core = suffix === '' ? denied : `${denied} ${suffix}`;
          const cmd = denyFirst ? `${core}${operator}${other}` : `${other}${operator}${core}`;
          const bad: AskedTool = { toolUseId: 'bad', name: 'Execute', kind: 'execute', label: 'x', command: cmd, input: {} };
          const tools = [...others, bad];
          const ctx: PolicyContext = {
            policy: { ...base, deny: [...base.deny, denied], allow: [...base.allow, denied] },
            autonomy,
            workspace: WORKSPACE,
            remembered: remembered(tools, [...picks, true]),
          };
          const result = decidePermission(askOf(tools), ctx);
          expect(result.perTool.find((t) => t.toolUseId === 'bad')?.verdict).toBe('deny');
          expect(result.verdict).toBe('deny');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never turns an allow into a deny or an escalation when autonomy rises', () => {
    fc.assert(
      fc.property(
        policy,
        fc.array(askedTool, { minLength: 1, maxLength: 4 }),
        fc.constantFrom<'tool' | 'question'>('tool', 'question'),
        fc.array(fc.boolean(), { maxLength: 4 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        (base, tools, kindOfAsk, picks, a, b) => {
          const [lower, higher] = a <= b ? [LEVELS[a]!, LEVELS[b]!] : [LEVELS[b]!, LEVELS[a]!];
          const keys = remembered(tools, picks);
          const decide = (autonomy: (typeof LEVELS)[number]) =>
            decidePermission(askOf(tools, kindOfAsk), { policy: base, autonomy, workspace: WORKSPACE, remembered: keys });
          const low = decide(lower);
          const high = decide(higher);
          if (low.verdict === 'allow') expect(high.verdict).toBe('allow');
          low.perTool.forEach((t, i) => {
            if (t.verdict === 'allow') expect(high.perTool[i]?.verdict).toBe('allow');
            if (t.verdict === 'deny') expect(high.perTool[i]?.verdict).toBe('deny');
          });
          if (kindOfAsk === 'question') expect(high.verdict).toBe('escalate');
        },
      ),
      { numRuns: 500 },
    );
  });
});
