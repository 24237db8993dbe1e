import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { SessionRecord } from '../../core/store/index.js';
import type { CliContext } from '../../cli/context.js';
import { Output } from '../../cli/output.js';
import { createDecider, mergePolicies, sessionPolicyFromFlags, type SessionDecision } from '../../cli/permissions.js';

const SECRET = 'sk-decider-secret-42';
const NOW = '2026-01-01T00:00:00.000Z';

function session(fields: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: 's-1',
    adapter: 'droid',
    workspace: '/ws',
    createdAt: NOW,
    updatedAt: NOW,
    status: 'working',
    runs: [{ id: 'r1', prompt: 'p', autonomy: 'low', status: 'running' }],
    ...fields,
  };
}

const execAsk = (command: string): PermissionAsk => ({
  requestId: 'req-1',
  kind: 'tool',
  tools: [{ toolUseId: 't1', name: 'Execute', kind: 'execute', label: `execute: ${command}`, command, input: { command } }],
  options: ['allow-once', 'allow-session', 'deny'],
});

// An Output whose redactor knows SECRET, and a terminal whose TTY-ness the test chooses.
function rig(options: { json?: boolean; tty?: boolean } = {}) {
  const out = new Output({ json: options.json ?? false, stdout: new PassThrough(), stderr: new PassThrough() });
  out.addRedactor({ redact: (text: string) => text.replaceAll(SECRET, '***') } as never);
  const input = Object.assign(new PassThrough(), { isTTY: options.tty ?? false });
  const output = Object.assign(new PassThrough(), { isTTY: options.tty ?? false });
  let screen = '';
  output.on('data', (chunk: Buffer) => (screen += chunk.toString()));
  return { out, terminal: { input, output }, screen: () => screen };
}

const ctx = {} as CliContext;

describe('createDecider', () => {
  it('declines escalations without a TTY as policy and reports them for attention, redacted', async () => {
    const { out, terminal } = rig();
    const seen: SessionDecision[] = [];
    const decide = createDecider(ctx, {}, out, { terminal, onDecision: (d) => seen.push(d) });
    const decision = await decide(execAsk(`deploy --token ${SECRET}`), session());
    expect(decision).toMatchObject({ decision: 'deny', by: 'policy', escalated: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.session.id).toBe('s-1');
    expect(seen[0]?.attention).toContain('permission for execute: deploy --token *** was declined');
    expect(seen[0]?.attention).not.toContain(SECRET);
  });

  it('reports no attention once the turn was aborted (the person interrupted it)', async () => {
    const abort = new AbortController();
    abort.abort();
    const seen: SessionDecision[] = [];
    const decide = createDecider(ctx, {}, rig().out, { terminal: rig().terminal, signal: abort.signal, onDecision: (d) => seen.push(d) });
    expect(await decide(execAsk('make'), session())).toMatchObject({ decision: 'deny', by: 'policy', escalated: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.attention).toBeUndefined();
  });

  it('reports no attention for decisions the policy made by rule', async () => {
    const seen: SessionDecision[] = [];
    const decide = createDecider(ctx, { policy: { deny: ['git push'] } }, rig().out, {
      terminal: rig().terminal,
      onDecision: (d) => seen.push(d),
    });
    expect(await decide(execAsk('git push'), session())).toMatchObject({ decision: 'deny', by: 'policy', escalated: false });
    expect(seen[0]?.attention).toBeUndefined();
  });

  it('merges the YAML policy, the session record policy and the flags of this process', async () => {
    const { out, terminal } = rig();
    const decide = createDecider(ctx, { policy: { allow: ['npm test'] } }, out, { terminal, sessionPolicy: { allow: ['make'] } });
    const record = session({ policy: { allow: ['echo hi'], deny: [], denyPaths: [], writeBoundary: [] } });
    for (const command of ['npm test', 'make', 'echo hi > f.txt']) {
      expect(await decide(execAsk(command), record)).toMatchObject({ decision: 'allow', by: 'policy' });
    }
    expect(await decide(execAsk('echo hi > /etc/f.txt'), record)).toMatchObject({ decision: 'deny', escalated: true });
  });

  it('asks the person when stdin and stderr are TTYs', async () => {
    const { out, terminal, screen } = rig({ tty: true });
    const decide = createDecider(ctx, {}, out, { terminal });
    const pending = decide(execAsk('make deploy'), session());
    terminal.input.write('y\n');
    expect(await pending).toMatchObject({ decision: 'allow', by: 'human' });
    expect(screen()).toContain('[y] allow once');
  });

  it('never asks in --json mode, even on a TTY', async () => {
    const { out, terminal, screen } = rig({ tty: true, json: true });
    const decide = createDecider(ctx, {}, out, { terminal });
    expect(await decide(execAsk('make deploy'), session())).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(screen()).toBe('');
  });

  it('reports a declined question with the way to answer it', async () => {
    const seen: SessionDecision[] = [];
    const decide = createDecider(ctx, {}, rig().out, { terminal: rig().terminal, onDecision: (d) => seen.push(d) });
    const ask: PermissionAsk = {
      requestId: 'q',
      kind: 'question',
      tools: [],
      options: [],
      questions: [{ index: 1, question: 'Which color?', options: ['Red'], multiSelect: false }],
    };
    expect(await decide(ask, session())).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(seen[0]?.attention).toContain('"Which color?" was declined');
    expect(seen[0]?.attention).toContain('one-works send s-1');
  });
});

describe('sessionPolicyFromFlags', () => {
  it('is undefined without flags and a parsed policy with them', () => {
    expect(sessionPolicyFromFlags({})).toBeUndefined();
    expect(sessionPolicyFromFlags({ allow: ['echo hi'], deny: ['git push'] })).toEqual({
      allow: ['echo hi'],
      deny: ['git push'],
      denyPaths: [],
      writeBoundary: [],
    });
  });

  it('names the flag and value of an invalid entry', () => {
    let error: unknown;
    try {
      sessionPolicyFromFlags({ allow: ['ok', 'a && b'] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OneWorksError);
    expect((error as OneWorksError).code).toBe('usage');
    expect((error as OneWorksError).message).toMatch(/^--allow "a && b": allow entries match one command at a time/);
  });
});

describe('mergePolicies', () => {
  it('unions each list without duplicates and skips missing parts', () => {
    expect(mergePolicies({ allow: ['a', 'b'] }, undefined, { allow: ['b', 'c'], denyPaths: ['/etc'] })).toEqual({
      allow: ['a', 'b', 'c'],
      deny: [],
      denyPaths: ['/etc'],
      writeBoundary: [],
    });
  });
});
