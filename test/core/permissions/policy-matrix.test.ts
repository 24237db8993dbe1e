import { describe, expect, it } from 'vitest';
import { decidePermission } from '../../../core/permissions/index.js';
import type { AskedTool, PermissionPolicyInput, PolicyVerdict } from '../../../core/permissions/index.js';
import { ask, context, edit, exec, question, tool } from './ask-builders.js';

// The full matrix: one row per rule, one expected verdict per autonomy level (off, low, medium, high).
const POLICY: PermissionPolicyInput = {
  allow: ['npm test', 'git status'],
  deny: ['rm -rf /', 'git push'],
  denyPaths: ['/ws/project/.git', '/etc'],
  writeBoundary: ['/ws/shared'],
};

type Row = [name: string, tool: () => AskedTool, expected: [PolicyVerdict, PolicyVerdict, PolicyVerdict, PolicyVerdict], reason: RegExp];

const E = 'escalate';
const ROWS: Row[] = [
  [
    'read is read-only',
    () => tool({ kind: 'read', name: 'Read', paths: ['/etc/passwd'] }),
    ['allow', 'allow', 'allow', 'allow'],
    /Read \(read\) is read-only/,
  ],
  ['search is read-only', () => tool({ kind: 'search', name: 'Grep' }), ['allow', 'allow', 'allow', 'allow'], /read-only/],
  ['edit inside the workspace', () => edit('/ws/project/src/a.ts'), [E, E, 'allow', 'allow'], /inside the workspace/],
  ['edit of the workspace root itself', () => edit('/ws/project'), [E, E, 'allow', 'allow'], /inside the workspace/],
  ['edit inside the write boundary', () => edit('/ws/shared/notes.md'), [E, E, 'allow', 'allow'], /inside the workspace/],
  ['edit outside the boundary', () => edit('/home/me/.bashrc'), [E, E, E, E], /\/home\/me\/\.bashrc, outside the workspace/],
  ['edit of a sibling sharing the prefix', () => edit('/ws/project-other/a.ts'), [E, E, E, E], /outside the workspace/],
  ['edit escaping with ..', () => edit('/ws/project/../secrets/a'), [E, E, E, E], /outside the workspace/],
  ['edit with a relative path', () => edit('src/a.ts'), [E, E, E, E], /not an absolute path/],
  ['edit without paths', () => edit(), [E, E, E, E], /names no target paths/],
  [
    'edit under denyPaths',
    () => edit('/ws/project/.git/config'),
    ['deny', 'deny', 'deny', 'deny'],
    /under denied path \/ws\/project\/\.git/,
  ],
  ['edit under denyPaths outside the boundary', () => edit('/etc/hosts'), ['deny', 'deny', 'deny', 'deny'], /under denied path \/etc/],
  ['command on the deny list', () => exec('git push origin main'), ['deny', 'deny', 'deny', 'deny'], /matches deny entry 'git push'/],
  [
    'command on the allow list',
    () => exec('npm test -- -t x'),
    ['allow', 'allow', 'allow', 'allow'],
    /command 'npm test -- -t x' is on the allowlist/,
  ],
  [
    'command on neither list',
    () => exec('make build'),
    [E, E, E, 'allow'],
    /'make build' is not on the allowlist|allowed at autonomy high/,
  ],
  [
    'allowlisted command writing outside',
    () => exec('git status > /tmp/out'),
    [E, E, E, 'allow'],
    /redirects output outside|autonomy high/,
  ],
  [
    'allowlisted command writing under denyPaths',
    () => exec('git status > /etc/motd'),
    ['deny', 'deny', 'deny', 'deny'],
    /writes \/etc\/motd, under denied path \/etc/,
  ],
  ['execute without a command', () => tool({ kind: 'execute', name: 'Execute' }), [E, E, E, E], /names no command/],
  ['fetch', () => tool({ kind: 'fetch', name: 'FetchUrl' }), [E, E, E, 'allow'], /FetchUrl \(fetch\)/],
  ['other', () => tool({ kind: 'other', name: 'mcp__db__query' }), [E, E, E, E], /mcp__db__query is a tool the policy has no rule for/],
  ['unknown kind', () => tool({ kind: 'teleport', name: 'Beam' }), [E, E, E, E], /Beam has an unknown kind 'teleport'/],
  [
    'other kind touching denyPaths',
    () => tool({ kind: 'other', name: 'Writer', paths: ['/etc/x'] }),
    ['deny', 'deny', 'deny', 'deny'],
    /under denied path/,
  ],
];

const LEVELS = ['off', 'low', 'medium', 'high'] as const;

describe('decidePermission matrix', () => {
  for (const [name, makeTool, expected, reason] of ROWS) {
    LEVELS.forEach((autonomy, index) => {
      it(`${name} at autonomy ${autonomy} → ${expected[index]}`, () => {
        const t = makeTool();
        const result = decidePermission(ask(t), context(autonomy, POLICY));
        expect(result.verdict).toBe(expected[index]);
        expect(result.perTool).toEqual([{ toolUseId: t.toolUseId, verdict: expected[index], reason: result.reason }]);
        expect(result.reason).toMatch(reason);
      });
    });
  }

  for (const autonomy of LEVELS) {
    it(`escalates a question at autonomy ${autonomy}, even with everything remembered`, () => {
      const q = question();
      const result = decidePermission(q, context(autonomy, POLICY, new Set(['other:AskUser'])));
      expect(result.verdict).toBe('escalate');
      expect(result.reason).toMatch(/questions/);
      expect(result.perTool.map((t) => t.verdict)).toEqual(['escalate']);
    });
  }

  it('escalates a tool ask that names no tools', () => {
    const result = decidePermission(ask(), context('high', POLICY));
    expect(result).toEqual({ verdict: 'escalate', reason: 'the ask names no tools', perTool: [] });
  });
});
