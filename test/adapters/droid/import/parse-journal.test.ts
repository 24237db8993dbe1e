import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDroidJournal } from '../../../../adapters/droid/import/index.js';
import { isJournalFile, journalInProject } from '../../../../adapters/droid/import/journal-paths.js';
import { OneWorksError } from '../../../../core/errors.js';
import { EventDraftSchema } from '../../../../core/events/index.js';

// Journals written by the real droid 0.225.2 (run against the scripted model, cwd rewritten to
// /PROJECT): one session with two turns and two Execute calls, one text-only session.
const DIR = fileURLToPath(new URL('../../../fixtures/droid/0.225.2/journals/-PROJECT/', import.meta.url));
const TOOLS = readFileSync(`${DIR}9ee48da7-99f4-454d-97b1-8915089b3b07.jsonl`, 'utf8');
const TEXT = readFileSync(`${DIR}35cfd93d-04c3-4e2a-b4c8-c13384450066.jsonl`, 'utf8');

const refusal = (content: string): string => {
  try {
    parseDroidJournal(content, '/src/x.jsonl');
  } catch (error) {
    expect(error).toBeInstanceOf(OneWorksError);
    expect((error as OneWorksError).code).toBe('import_refused');
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('parseDroidJournal', () => {
  it('reads a real journal: id, cwd, turns, tool calls joined to their results, kinds mapped', () => {
    const session = parseDroidJournal(TOOLS, '/src/a.jsonl');
    expect(session).toMatchObject({
      nativeSessionId: '9ee48da7-99f4-454d-97b1-8915089b3b07',
      workspace: '/PROJECT',
      title: 'Scripted title',
      kind: 'top-level',
    });
    for (const event of session.events) expect(EventDraftSchema.safeParse(event).success).toBe(true);
    const types = session.events.filter((e) => e.type !== 'native').map((e) => e.type);
    expect(types).toEqual([
      'turn.queued',
      'tool.call',
      'tool.result',
      'assistant.message',
      'turn.completed',
      'turn.queued',
      'tool.call',
      'tool.result',
      'assistant.message',
      'turn.completed',
    ]);
    const calls = session.events.filter((e) => e.type === 'tool.call');
    expect(calls.map((c) => [c.toolUseId, c.kind, c.label])).toEqual([
      ['call_journal_1', 'execute', 'execute: echo hello > hello.txt'],
      ['call_journal_2', 'execute', 'execute: cat hello.txt'],
    ]);
    const results = session.events.filter((e) => e.type === 'tool.result');
    expect(results.map((r) => [r.toolUseId, r.isError])).toEqual([
      ['call_journal_1', false],
      ['call_journal_2', false],
    ]);
    expect(results[1]!.output).toContain('hello');
    const prompts = session.events.filter((e) => e.type === 'turn.queued').map((e) => e.prompt);
    expect(prompts).toEqual(['write hello', 'read it back']);
    const outcomes = session.events.filter((e) => e.type === 'turn.completed').map((e) => e.outcome);
    expect(outcomes).toEqual([
      { status: 'completed', reason: 'completed', text: 'Wrote hello.txt.', usage: { reported: false } },
      { status: 'completed', reason: 'completed', text: 'It says hello.', usage: { reported: false } },
    ]);
    // The context reminder droid stores before the first prompt is kept, not dropped.
    expect(session.events.some((e) => e.type === 'native' && e.nativeType === 'droid.message.text')).toBe(true);
    // Unmapped session_start members are kept; the id members are not repeated there.
    expect(session.nativeDetails).toMatchObject({ owner: 'unknown', version: 2, hostId: expect.any(String) });
    expect(session.nativeDetails).not.toHaveProperty('id');
    expect(session.homeFiles).toEqual([
      { path: '.factory/sessions/-PROJECT/9ee48da7-99f4-454d-97b1-8915089b3b07.jsonl', content: TOOLS, mode: 0o600 },
    ]);
  });

  it('gives every event a key made of its line, so a journal that grew adds only its new lines', () => {
    const first = parseDroidJournal(TEXT, '/src/b.jsonl');
    const lines = TEXT.trimEnd().split('\n');
    const shorter = parseDroidJournal(`${lines.slice(0, -2).join('\n')}\n`, '/src/b.jsonl');
    const keys = new Set(first.events.map((e) => e.key));
    expect(keys.size).toBe(first.events.length);
    expect(shorter.events.every((e) => keys.has(e.key))).toBe(true);
    expect(first.events.length).toBeGreaterThan(shorter.events.length);
  });

  it('takes sessionId, or the legacy id alone, and refuses both when they differ', () => {
    const [start, ...rest] = TEXT.trimEnd().split('\n');
    const header = JSON.parse(start!) as Record<string, unknown>;
    const withBoth = (sessionId: string) => [JSON.stringify({ ...header, sessionId }), ...rest].join('\n');
    expect(parseDroidJournal(withBoth(String(header.id)), '/s').nativeSessionId).toBe(header.id);
    const { id: _legacy, ...noLegacy } = header;
    expect(parseDroidJournal([JSON.stringify({ ...noLegacy, sessionId: 'only-new' }), ...rest].join('\n'), '/s').nativeSessionId).toBe(
      'only-new',
    );
    expect(refusal(withBoth('another-id'))).toMatch(/two different ids/);
  });

  it('refuses a malformed line, a file without session_start, and an empty file, naming the line', () => {
    const lines = TEXT.trimEnd().split('\n');
    expect(refusal([...lines.slice(0, 2), '{"type":"message",', ...lines.slice(2)].join('\n'))).toMatch(/line 3 is not JSON/);
    expect(refusal(lines.slice(1).join('\n'))).toMatch(/line 1 is not a droid session_start line/);
    expect(refusal('')).toMatch(/empty/);
    expect(refusal([lines[0], '{"type":"message","id":"m1"}'].join('\n'))).toMatch(/line 2 is not a droid message line/);
  });

  it('joins results by tool_use id only where the id is unique, and keeps retries that reuse an id apart', () => {
    const header = TEXT.split('\n')[0]!;
    const use = (line: string, id: string) =>
      JSON.stringify({
        type: 'message',
        id: line,
        parentId: line,
        message: { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Grep', input: { pattern: 'x' } }] },
      });
    const result = (line: string, id: string) =>
      JSON.stringify({
        type: 'message',
        id: line,
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'out' }] },
      });
    const journal = [header, use('m1', 'dup'), use('m1', 'dup'), result('m2', 'dup'), use('m3', 'solo'), result('m4', 'solo')].join('\n');
    const events = parseDroidJournal(journal, '/s').events;
    const calls = events.filter((e) => e.type === 'tool.call');
    expect(calls.map((c) => c.toolUseId)).toEqual(['dup@2:0', 'dup@3:0', 'solo']);
    expect(calls.map((c) => c.kind)).toEqual(['search', 'search', 'search']);
    expect(events.filter((e) => e.type === 'tool.result').map((r) => r.toolUseId)).toEqual(['solo']);
    expect(events.some((e) => e.type === 'native' && e.nativeType === 'droid.message.tool_result')).toBe(true);
  });

  it('maps tool names to kinds as the issue lists, and classifies worker and forked sessions', () => {
    const header = JSON.parse(TEXT.split('\n')[0]!) as Record<string, unknown>;
    const names = ['Execute', 'Read', 'Edit', 'Create', 'ApplyPatch', 'Grep', 'Glob', 'LS', 'FetchUrl', 'WebSearch', 'TodoWrite'];
    const uses = names.map((name, i) =>
      JSON.stringify({
        type: 'message',
        id: `m${i}`,
        message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name, input: {} }] },
      }),
    );
    const worker = parseDroidJournal([JSON.stringify({ ...header, callingSessionId: 'caller' }), ...uses].join('\n'), '/s');
    expect(worker.events.filter((e) => e.type === 'tool.call').map((e) => e.kind)).toEqual([
      'execute',
      'read',
      'edit',
      'edit',
      'edit',
      'search',
      'search',
      'search',
      'fetch',
      'fetch',
      'other',
    ]);
    expect(worker).toMatchObject({ kind: 'sub-session', parentNativeSessionId: 'caller' });
    expect(parseDroidJournal(JSON.stringify({ ...header, parent: 'source' }), '/s')).toMatchObject({
      kind: 'fork',
      parentNativeSessionId: 'source',
    });
  });

  it('keeps usage a message reports and treats placeholder zeros as none', () => {
    const header = TEXT.split('\n')[0]!;
    const message = (id: string, usage: unknown) =>
      JSON.stringify({ type: 'message', id, message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage } });
    const events = parseDroidJournal(
      [header, message('a', { input_tokens: 0, output_tokens: 0 }), message('b', { input_tokens: 12, output_tokens: 3 })].join('\n'),
      '/s',
    ).events;
    expect(events.filter((e) => e.type === 'usage').map((e) => e.usage)).toEqual([{ reported: true, inputTokens: 12, outputTokens: 3 }]);
  });
});

describe('journal paths', () => {
  it('takes <slug>/<id>.jsonl only, in the projects asked for', () => {
    expect(isJournalFile('-a-b/x.jsonl')).toBe(true);
    expect(isJournalFile('-a-b/x.settings.json')).toBe(false);
    expect(isJournalFile('x.jsonl')).toBe(false);
    expect(isJournalFile('-a-b/c/x.jsonl')).toBe(false);
    expect(journalInProject('-a-b/x.jsonl', ['/a/b'])).toBe(true);
    expect(journalInProject('-a-b-c/x.jsonl', ['/a/b'])).toBe(false);
  });
});
