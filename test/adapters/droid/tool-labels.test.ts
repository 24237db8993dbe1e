import { describe, expect, it } from 'vitest';
import { describePermissionTool, shortenPath, toolKind, toolLabel } from '../../../adapters/droid/tool-labels.js';
import type { DroidPermissionToolUse } from '../../../adapters/droid/wire.js';

const WS = '/home/me/project';

describe('toolKind', () => {
  it.each([
    ['Execute', 'execute'],
    ['Read', 'read'],
    ['Edit', 'edit'],
    ['Create', 'edit'],
    ['ApplyPatch', 'edit'],
    ['Grep', 'search'],
    ['Glob', 'search'],
    ['LS', 'search'],
    ['FetchUrl', 'fetch'],
    ['WebSearch', 'fetch'],
    ['AskUser', 'other'],
    ['echo___say', 'other'],
    ['toString', 'other'],
  ])('%s → %s', (name, kind) => {
    expect(toolKind(name)).toBe(kind);
  });
});

describe('shortenPath', () => {
  it('makes paths inside the workspace relative, the workspace itself "."', () => {
    expect(shortenPath(`${WS}/a.ts`, WS)).toBe('a.ts');
    expect(shortenPath(`${WS}/src/a.ts`, `${WS}/`)).toBe('src/a.ts');
    expect(shortenPath(WS, WS)).toBe('.');
  });

  it('keeps the last two segments behind …/ when longer', () => {
    expect(shortenPath(`${WS}/src/core/deep/file.ts`, WS)).toBe('…/deep/file.ts');
    expect(shortenPath('/usr/lib/node/x.js')).toBe('…/node/x.js');
    expect(shortenPath('/etc/hosts', WS)).toBe('/etc/hosts');
  });

  it('does not treat a sibling with the workspace as prefix as inside it', () => {
    expect(shortenPath('/home/me/project-two/a.ts', WS)).toBe('…/project-two/a.ts');
  });
});

describe('toolLabel', () => {
  it('execute: first line of the command, trimmed, capped', () => {
    expect(toolLabel('Execute', { command: '  npm test  ' }, WS)).toBe('execute: npm test');
    expect(toolLabel('Execute', { command: 'set -e\nmake all' }, WS)).toBe('execute: set -e …');
    const long = toolLabel('Execute', { command: `echo ${'x'.repeat(200)}` }, WS);
    expect(long.length).toBe('execute: '.length + 80);
    expect(long.endsWith('…')).toBe(true);
  });

  it('read and edit show the shortened target path', () => {
    expect(toolLabel('Read', { file_path: `${WS}/src/lib/path.ts` }, WS)).toBe('read: …/lib/path.ts');
    expect(toolLabel('Create', { file_path: `${WS}/new.txt`, content: 'x' }, WS)).toBe('edit: new.txt');
    expect(toolLabel('ApplyPatch', { input: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n' }, WS)).toBe('edit: src/a.ts');
  });

  it('search shows the pattern and where', () => {
    expect(toolLabel('Grep', { pattern: 'TODO', path: `${WS}/src` }, WS)).toBe('search: TODO in src');
    expect(toolLabel('Glob', { patterns: ['**/*.ts', '*.md'] }, WS)).toBe('search: **/*.ts, *.md');
    expect(toolLabel('LS', { directory_path: WS }, WS)).toBe('search: .');
  });

  it('fetch shows the url (or the search query)', () => {
    expect(toolLabel('FetchUrl', { url: 'https://example.com/a' }, WS)).toBe('fetch: https://example.com/a');
    expect(toolLabel('WebSearch', { query: 'zod looseObject' }, WS)).toBe('fetch: zod looseObject');
  });

  it('other tools keep their native name; an empty input gives the bare kind', () => {
    expect(toolLabel('echo___say', { text: 'hi' }, WS)).toBe('other: echo___say');
    expect(toolLabel('Execute', {}, WS)).toBe('execute');
    expect(toolLabel('Read', undefined, WS)).toBe('read');
  });
});

function entry(name: string, input: unknown, details?: Record<string, unknown>): DroidPermissionToolUse {
  return {
    toolUse: { type: 'tool_use', id: 'call_1_0', name, input },
    ...(details ? { confirmationType: String(details.type), details: { type: String(details.type), ...details } } : {}),
  };
}

describe('describePermissionTool', () => {
  it('exec: full command and impact from details', () => {
    const input = { command: 'echo hi > out.txt && cat out.txt', riskLevel: 'medium' };
    const tool = describePermissionTool(
      entry('Execute', input, { type: 'exec', fullCommand: input.command, command: 'echo, cat', impactLevel: 'medium' }),
      WS,
    );
    expect(tool).toEqual({
      toolUseId: 'call_1_0',
      name: 'Execute',
      kind: 'execute',
      label: 'execute: echo hi > out.txt && cat out.txt',
      command: 'echo hi > out.txt && cat out.txt',
      impact: 'medium',
      input,
    });
  });

  it('edit / create: absolute target path from details.filePath', () => {
    const edit = describePermissionTool(
      entry('Edit', { file_path: `${WS}/new.txt` }, { type: 'edit', filePath: `${WS}/new.txt`, fileName: 'new.txt' }),
      WS,
    );
    expect(edit).toMatchObject({ kind: 'edit', label: 'edit: new.txt', paths: [`${WS}/new.txt`] });
    expect(edit.command).toBeUndefined();
    const create = describePermissionTool(entry('Create', { file_path: 'rel/x.txt' }, { type: 'create', fileName: 'x.txt' }), WS);
    expect(create.paths).toEqual([`${WS}/rel/x.txt`]);
  });

  it('apply_patch: every file of the patch', () => {
    const tool = describePermissionTool(
      entry(
        'ApplyPatch',
        { input: '' },
        { type: 'apply_patch', filePath: `${WS}/a.ts`, files: [{ filePath: `${WS}/b.ts` }, `${WS}/a.ts`] },
      ),
      WS,
    );
    expect(tool.paths).toEqual([`${WS}/a.ts`, `${WS}/b.ts`]);
  });

  it('mcp_tool: impact from details, no command or paths', () => {
    const tool = describePermissionTool(
      entry('echo___say', { text: 'hello mcp' }, { type: 'mcp_tool', toolName: 'echo___say', impactLevel: 'high', serverName: 'echo' }),
      WS,
    );
    expect(tool).toEqual({
      toolUseId: 'call_1_0',
      name: 'echo___say',
      kind: 'other',
      label: 'other: echo___say',
      impact: 'high',
      input: { text: 'hello mcp' },
    });
  });

  it('ignores an impact level outside low/medium/high', () => {
    expect(
      describePermissionTool(entry('Execute', { command: 'ls' }, { type: 'exec', fullCommand: 'ls', impactLevel: 'extreme' }), WS).impact,
    ).toBeUndefined();
  });
});
