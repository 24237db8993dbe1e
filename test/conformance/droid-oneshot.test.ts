import { access, chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliRigs, ONE_WORKS_BIN, type CliRig } from '../support/one-works-cli.js';
import { lastUserText, toolResults } from '../support/scripted-model.js';
import type { ScriptedModel } from '../support/scripted-model.js';

// One-shot mode on the real droid (issue 14): when droid's stream-jsonrpc surface fails, the run
// goes on as `droid exec --output-format json` with droid's read-only tools only, because without
// droid's permission requests One Works' policy cannot decide a command. The stream-jsonrpc
// surface is made to fail by a wrapper that exits at once when asked for stream-jsonrpc (while a
// flag file exists) and runs the real droid otherwise.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const binaries: Record<string, string> = {};
beforeAll(() => {
  for (const [version, name] of [
    ['0.225.2', 'ONE_WORKS_TEST_DROID'],
    ['0.215.0', 'ONE_WORKS_TEST_DROID_0215'],
  ] as const) {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: run this file in the vitest conformance project (its global setup installs droid)`);
    binaries[version] = value;
  }
});

interface FlakyRig {
  rig: CliRig;
  /** While this file exists, the wrapper refuses stream-jsonrpc (droid "fails to start"). */
  flag: string;
}

async function flakyRig(model: ScriptedModel, version: '0.225.2' | '0.215.0', droid: Record<string, unknown>): Promise<FlakyRig> {
  const dir = await rigs.tempDir('ow-oneshot-bin-');
  const flag = join(dir, 'stream-jsonrpc-off');
  const wrapper = join(dir, 'droid');
  const script = [
    '#!/bin/sh',
    `case " $* " in *" stream-jsonrpc "*) if [ -e '${flag}' ]; then echo 'wrapper: stream-jsonrpc is off' >&2; exit 1; fi ;; esac`,
    `exec '${binaries[version]}' "$@"`,
    '',
  ].join('\n');
  await writeFile(wrapper, script);
  await chmod(wrapper, 0o755);
  const rig = await rigs.create({ baseUrl: model.baseUrl, cli: { source: 'path', path: wrapper, version }, droid });
  return { rig, flag };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

for (const version of ['0.225.2', '0.215.0'] as const) {
  describe(`one-shot mode on the real droid ${version}`, () => {
    it('runs a turn whose read-only tool runs and whose command stays unrun, even at autonomy high', async () => {
      const marker = 'one-shot-ran.txt';
      // droid's Read takes an absolute path: the workspace is known once the rig exists.
      let notes = '';
      const model = await rigs.model({
        strict: true,
        steps: [
          () => ({
            text: 'Reading, then writing.',
            toolCalls: [
              { id: 'call_os_read', name: 'Read', arguments: { file_path: notes } },
              {
                id: 'call_os_exec',
                name: 'Execute',
                arguments: { command: `echo ran > ${marker}`, riskLevel: 'low', riskLevelReason: 'writes one file' },
              },
            ],
          }),
          (request) => ({
            text: `results: ${toolResults(request)
              .map((r) => `${r.toolCallId}=${r.content.split('\n')[0]}`)
              .join(' | ')}`,
            usage: { prompt_tokens: 40, completion_tokens: 7 },
          }),
        ],
      });
      // At autonomy high the policy would allow this echo over stream-jsonrpc; in one-shot mode it cannot decide it.
      const { rig, flag } = await flakyRig(model, version, { autonomy: 'high' });
      // The model check before a turn reads droid's catalog, listed over stream-jsonrpc and cached:
      // list it while the surface works, then turn the surface off.
      const listed = await rig.run(['models']);
      expect(listed.exitCode, listed.stderr).toBe(0);
      await writeFile(flag, '');
      notes = join(rig.workspace, 'NOTES.md');
      await writeFile(notes, 'the notes say hello\n');

      const result = await rig.run(['run', '--workspace', rig.workspace, 'read the notes, then write a file']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(await exists(join(rig.workspace, marker))).toBe(false);

      const conversation = model.requests.filter((r) => r.kind === 'step');
      expect(conversation).toHaveLength(2);
      // droid offered the model its read-only tools only, and refused the command itself.
      const tools = ((conversation[0]!.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);
      expect(tools.sort()).toEqual(['Glob', 'Grep', 'LS', 'Read']);
      expect(lastUserText(conversation[0]!)).toBe('read the notes, then write a file');
      const results = new Map(toolResults(conversation[1]!).map((r) => [r.toolCallId, r.content]));
      expect(results.get('call_os_exec')).toMatch(/Tool Execute is not permitted in this exec session/);
      expect(results.get('call_os_read')).toContain('the notes say hello');

      const [id] = await rig.sessionIds();
      const record = await rig.readSession(id!);
      expect(record.runs[0]).toMatchObject({ status: 'completed', mode: 'oneshot', text: expect.stringMatching(/^results: /) });
      // droid sums the turn's model calls (the last one reported 7 output tokens).
      expect(record.runs[0]?.usage?.reported).toBe(true);
      expect(record.runs[0]?.usage?.outputTokens).toBeGreaterThanOrEqual(7);
      expect(record.nativeSessionId).toMatch(/^[0-9a-f-]{36}$/);
      const events = await rig.readEvents(id!);
      const warns = events.filter((e) => e.type === 'log' && e.level === 'warn').map((e) => (e.type === 'log' ? e.message : ''));
      expect(warns).toEqual(expect.arrayContaining([expect.stringMatching(/start failed.*one-shot mode.*read-only tools/)]));
      const spans = events.filter((e) => e.type === 'tool.call' || e.type === 'tool.result');
      expect(spans.map((e) => [e.type, e.toolUseId])).toEqual([
        ['tool.call', 'oneshot:r1'],
        ['tool.result', 'oneshot:r1'],
      ]);
      // The live view says so (its warnings on stderr, since warn events are diagnostics).
      expect(result.stderr).toMatch(/! droid's start failed .*one-shot mode/);
      expect(result.stdout).toContain('▸ one-shot turn: live tool detail is unavailable');
      const shown = await rig.run(['sessions', 'show', id!]);
      expect(shown.stdout).toContain('mode=oneshot');
    });
  });
}

describe('one-shot mode continuity without Factory servers (real droid 0.225.2)', () => {
  it('a send after the stream-jsonrpc surface failed carries the earlier conversation as a transcript', async () => {
    const model = await rigs.model({
      strict: true,
      steps: [{ text: 'Noted: the password word is PLUM.' }, (request) => ({ text: `I was told: ${lastUserText(request).length} chars` })],
    });
    const { rig, flag } = await flakyRig(model, '0.225.2', {});
    const first = await rig.run(['run', '--workspace', rig.workspace, 'remember the word PLUM']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const native = (await rig.readSession(id!)).nativeSessionId;
    // The model check before the send reads droid's cached catalog (listed over stream-jsonrpc).
    const listed = await rig.run(['models']);
    expect(listed.exitCode, listed.stderr).toBe(0);

    await writeFile(flag, '');
    const second = await rig.run(['send', id!, 'which word?']);
    expect(second.exitCode, second.stderr).toBe(0);

    // droid exec --session-id cannot fetch the session offline: the turn went to a new native
    // session whose prompt carried the first exchange, read from droid's own journal.
    const conversation = model.requests.filter((r) => r.kind === 'step');
    expect(conversation).toHaveLength(2);
    const carried = lastUserText(conversation[1]!);
    expect(carried).toContain('User: remember the word PLUM');
    expect(carried).toContain('Assistant: Noted: the password word is PLUM.');
    expect(carried.endsWith('which word?')).toBe(true);
    const record = await rig.readSession(id!);
    expect(record.runs.map((run) => [run.status, run.mode])).toEqual([
      ['completed', 'stream-jsonrpc'],
      ['completed', 'oneshot'],
    ]);
    expect(record.nativeSessionId).not.toBe(native);
    const warns = (await rig.readEvents(id!)).flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : []));
    expect(warns).toEqual(expect.arrayContaining([expect.stringMatching(/could not continue native session .*Factory's servers/)]));

    // MCP shows the mode: session_status (structured and text) and read_session's latest run.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
      cwd: rig.root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(transport);
    try {
      const status = await client.callTool({ name: 'session_status', arguments: { session: id } });
      expect(status.structuredContent).toMatchObject({ latestRun: { runId: 'r2', status: 'completed', mode: 'oneshot' } });
      expect(JSON.stringify(status.content)).toMatch(/run r2 completed (\(completed\) )?in one-shot mode/);
      const read = await client.callTool({ name: 'read_session', arguments: { session: id } });
      expect(read.structuredContent).toMatchObject({ latestRun: { runId: 'r2', mode: 'oneshot' } });
    } finally {
      await client.close();
    }
  });
});
