import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareCall, type ToolContext, toolDefinitions, toolsOf } from '../../../adapters/process-runner/tools.js';

const tools = toolsOf(['workspace']);
let root: string;
let workspace: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ow-runner-tools-')));
  workspace = join(root, 'ws');
  await mkdir(workspace);
});
afterEach(() => rm(root, { recursive: true, force: true }));

const ctx = (): ToolContext => ({ workspace, exec: undefined, commandTimeoutMs: 1_000, signal: new AbortController().signal });

async function call(name: string, args: Record<string, unknown>) {
  const prepared = prepareCall(tools, { id: 'c1', name, arguments: args }, workspace);
  if (!prepared.ok) return { content: prepared.problem, isError: true };
  return prepared.run(ctx());
}

describe('built-in workspace tools', () => {
  it('offers six tools with JSON Schemas that forbid unknown arguments', () => {
    const defs = toolDefinitions(tools);
    expect(defs.map((d) => d.name)).toEqual(['read_file', 'list_dir', 'search', 'write_file', 'edit_file', 'run_command']);
    expect(defs.find((d) => d.name === 'write_file')?.input_schema).toMatchObject({
      type: 'object',
      required: ['path', 'content'],
      additionalProperties: false,
    });
  });

  it('gives the policy absolute target paths for edits and the command for run_command', () => {
    const edit = prepareCall(tools, { id: 'c', name: 'write_file', arguments: { path: 'a/b.txt', content: '' } }, workspace);
    expect(edit).toMatchObject({ ok: true, asked: { kind: 'edit', paths: [join(workspace, 'a/b.txt')] } });
    const run = prepareCall(tools, { id: 'c', name: 'run_command', arguments: { command: 'ls -l' } }, workspace);
    expect(run).toMatchObject({ ok: true, asked: { kind: 'execute', command: 'ls -l', label: 'execute: ls -l' } });
  });

  it('writes, reads, edits (exactly one occurrence), lists and searches inside the workspace', async () => {
    expect(await call('write_file', { path: 'dir/a.txt', content: 'one two one' })).toMatchObject({ isError: false });
    expect(await call('read_file', { path: 'dir/a.txt' })).toEqual({ content: 'one two one', isError: false });
    expect(await call('edit_file', { path: 'dir/a.txt', old_text: 'one', new_text: '1' })).toMatchObject({
      isError: true,
      content: expect.stringContaining('occurs 2 times'),
    });
    expect(await call('edit_file', { path: 'dir/a.txt', old_text: 'two', new_text: '2' })).toMatchObject({ isError: false });
    expect(await readFile(join(workspace, 'dir/a.txt'), 'utf8')).toBe('one 2 one');
    expect(await call('list_dir', {})).toEqual({ content: 'dir/', isError: false });
    expect(await call('search', { pattern: '2' })).toEqual({ content: 'dir/a.txt:1: one 2 one', isError: false });
  });

  it('refuses paths out of the workspace: .., absolute, and a symlink pointing out', async () => {
    await writeFile(join(root, 'secret.txt'), 's3cret');
    await symlink(root, join(workspace, 'out'));
    for (const path of ['../secret.txt', join(root, 'secret.txt'), 'out/secret.txt']) {
      expect(await call('read_file', { path })).toMatchObject({ isError: true, content: expect.stringContaining('outside the workspace') });
    }
    expect(await call('write_file', { path: 'out/new.txt', content: 'x' })).toMatchObject({ isError: true });
    await expect(readFile(join(root, 'new.txt'))).rejects.toThrow();
  });

  it('refuses a write through a symlink inside the workspace: the policy decided the named path, not the target', async () => {
    await mkdir(join(workspace, 'secrets'));
    await symlink(join(workspace, 'secrets'), join(workspace, 'link'));
    // A denyPaths entry on <ws>/secrets would not match the facts of this call (<ws>/link/x.txt).
    const prepared = prepareCall(tools, { id: 'c', name: 'write_file', arguments: { path: 'link/x.txt', content: 'x' } }, workspace);
    expect(prepared).toMatchObject({ ok: true, asked: { paths: [join(workspace, 'link/x.txt')] } });
    expect(await call('write_file', { path: 'link/x.txt', content: 'x' })).toMatchObject({
      isError: true,
      content: expect.stringContaining('goes through a symlink to secrets/x.txt'),
    });
    await expect(readFile(join(workspace, 'secrets', 'x.txt'))).rejects.toThrow();
    expect(await call('write_file', { path: 'secrets/x.txt', content: 'x' })).toMatchObject({ isError: false });
  });

  it('an unknown tool or arguments that fail the schema are problems, not exceptions', () => {
    expect(prepareCall(tools, { id: 'c', name: 'rm_rf', arguments: {} }, workspace)).toMatchObject({ ok: false });
    expect(prepareCall(tools, { id: 'c', name: 'read_file', arguments: { path: 'a', extra: 1 } }, workspace)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('invalid arguments for read_file'),
    });
  });

  it('run_command without a sandbox executor is an is_error result', async () => {
    expect(await call('run_command', { command: 'true' })).toMatchObject({ isError: true });
  });
});
