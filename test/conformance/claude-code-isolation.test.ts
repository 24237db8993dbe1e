import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INHERITED_ENV_VARS } from '../../core/process/env.js';
import { CliRigs, RIG_API_KEY, type CliResult } from '../support/one-works-cli.js';
import { findProcesses, processEnv } from '../support/rig-processes.js';
import { type AnthropicStep, anthropicToolResults, type ScriptedAnthropic, startScriptedAnthropic } from '../support/scripted-anthropic.js';

// The real Claude Code 2.1.333 under One Works: what the policy declines never runs, the user's
// real ~/.claude and ~/.claude.json and the workspace's own settings hooks and .mcp.json are
// never read or touched, the injected key is absent from everything One Works writes or prints,
// and the claude process holds only allowlisted variables.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function anthropic(steps: AnthropicStep[]): Promise<ScriptedAnthropic> {
  const model = await startScriptedAnthropic({ steps, pieceSize: 5 });
  rigs.defer(() => model.close());
  return model;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) await walk(p);
      else if (entry.isFile()) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

describe('claude-code: permissions', () => {
  it('a Write the policy escalates is declined without a terminal: nothing is written, the session needs attention', async () => {
    // The model writes into the workspace: an edit needs autonomy medium, the session has low.
    const holder: { target?: string } = {};
    const model = await anthropic([
      () => ({ toolCalls: [{ id: 'toolu_write_1', name: 'Write', input: { file_path: holder.target, content: 'should never exist' } }] }),
      { text: 'Understood, not writing.' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });
    holder.target = join(rig.workspace, 'escalated.txt');
    const result = await rig.run(['run', '-A', 'claude-code', '--workspace', rig.workspace, 'write a file']);
    await expect(stat(holder.target)).rejects.toThrow(/ENOENT/);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.status, result.stderr + result.stdout).toBe('needs_attention');
    expect(record.attention?.join('\n')).toMatch(/declined/);
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'permission.requested')).toMatchObject({ tools: [{ toolUseId: 'toolu_write_1', kind: 'edit' }] });
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'toolu_write_1', isError: true });
    const second = model.requests.filter((r) => r.kind === 'step')[1]!;
    expect(anthropicToolResults(second)[0]).toMatchObject({ toolUseId: 'toolu_write_1', isError: true });
  });

  it('a command on the deny list never runs', async () => {
    const model = await anthropic([
      { toolCalls: [{ id: 'toolu_rm_1', name: 'Bash', input: { command: 'rm -f keep.txt', description: 'remove' } }] },
      { text: 'Could not remove it.' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl, autonomy: 'high' } });
    await writeFile(join(rig.workspace, 'keep.txt'), 'still here');
    const result = await rig.run(['run', '-A', 'claude-code', '--deny', 'rm', '--workspace', rig.workspace, 'remove the file']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'keep.txt'), 'utf8')).toBe('still here');
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'toolu_rm_1', isError: true });
  });
});

describe('claude-code: isolation', () => {
  it('leaves a canary ~/.claude and ~/.claude.json untouched and loads neither the workspace hooks nor its .mcp.json', async () => {
    const model = await anthropic([
      { toolCalls: [{ id: 'toolu_iso_1', name: 'Bash', input: { command: 'echo isolated', description: 'echo' } }] },
      { text: 'done' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });
    const marker = (name: string): string => join(rig.root, name);
    // The user's real Claude Code state, with a hook that would leave a marker if it ever ran.
    const userClaude = join(rig.userHome, '.claude');
    await mkdir(userClaude);
    const hook = (name: string) => ({ hooks: [{ type: 'command', command: `touch ${marker(name)}` }] });
    const canarySettings = JSON.stringify({
      hooks: { PreToolUse: [{ matcher: '*', ...hook('USER_HOOK') }], SessionStart: [hook('USER_START')] },
    });
    await writeFile(join(userClaude, 'settings.json'), canarySettings);
    await writeFile(join(rig.userHome, '.claude.json'), '{"canary":true}');
    // The workspace's own project settings and MCP servers.
    await mkdir(join(rig.workspace, '.claude'));
    await writeFile(
      join(rig.workspace, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', ...hook('WS_HOOK') }], SessionStart: [hook('WS_START')] } }),
    );
    await writeFile(join(rig.workspace, '.claude', 'settings.local.json'), JSON.stringify({ hooks: { SessionStart: [hook('WS_LOCAL')] } }));
    await writeFile(
      join(rig.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { evil: { command: 'touch', args: [marker('MCP_RAN')] } } }),
    );
    const before = await Promise.all([stat(join(userClaude, 'settings.json')), stat(join(rig.userHome, '.claude.json'))]);

    const result = await rig.run(['run', '-A', 'claude-code', '--allow', 'echo', '--workspace', rig.workspace, 'echo']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed' });
    expect((await rig.readEvents(id!)).find((e) => e.type === 'tool.result')).toMatchObject({ isError: false, output: 'isolated' });

    for (const name of ['USER_HOOK', 'USER_START', 'WS_HOOK', 'WS_START', 'WS_LOCAL', 'MCP_RAN']) {
      await expect(stat(marker(name)), name).rejects.toThrow(/ENOENT/);
    }
    expect(await readdir(userClaude)).toEqual(['settings.json']);
    expect(await readFile(join(userClaude, 'settings.json'), 'utf8')).toBe(canarySettings);
    expect(await readFile(join(rig.userHome, '.claude.json'), 'utf8')).toBe('{"canary":true}');
    const after = await Promise.all([stat(join(userClaude, 'settings.json')), stat(join(rig.userHome, '.claude.json'))]);
    expect(after.map((s) => s.mtimeMs)).toEqual(before.map((s) => s.mtimeMs));
    expect((await readdir(rig.userHome)).sort()).toEqual(['.claude', '.claude.json']);
    // Claude Code's state went to the session HOME instead.
    const home = rig.sessionHome(id!);
    expect((await filesUnder(join(home, '.claude'))).some((f) => f.endsWith('.jsonl'))).toBe(true);
  });

  it('the claude process holds only allowlisted variables (and the passEnv ones that are set), and the key is absent from everything One Works wrote or printed', async () => {
    let childEnv: Record<string, string> | undefined;
    const sampleEnv = (): void => {
      const claude = findProcesses(rigRoot).find((p) => p.args.includes('--input-format stream-json'));
      if (claude) childEnv = processEnv(claude.pid);
    };
    let rigRoot = '';
    const model = await anthropic([
      () => {
        sampleEnv();
        return {
          text: `Echoing the key: ${RIG_API_KEY}.`,
          toolCalls: [{ id: 'toolu_env_1', name: 'Bash', input: { command: 'echo "$ANTHROPIC_API_KEY"', description: 'print' } }],
        };
      },
      (request) => ({
        text: `The tool said ${anthropicToolResults(request)[0]?.content} and the header was ${String(request.headers['x-api-key'])}`,
      }),
    ]);
    // passEnv lets host variables through by name, only when they are set.
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      claude: { baseUrl: model.baseUrl, passEnv: ['ONE_WORKS_PASSED', 'ONE_WORKS_PASSED_UNSET'] },
    });
    rigRoot = rig.root;
    const outputs: CliResult[] = [];
    outputs.push(
      await rig.run(['run', '-A', 'claude-code', '--allow', 'echo', '--workspace', rig.workspace, 'print the key'], {
        env: { HOST_SECRET_NOT_ALLOWED: 'host-secret-value', ONE_WORKS_PASSED: 'let-through' },
      }),
    );
    expect(outputs[0]!.exitCode, outputs[0]!.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed' });
    // The model really saw the key (so the test would notice a leak).
    expect(model.requests.find((r) => r.kind === 'step')?.headers['x-api-key']).toBe(RIG_API_KEY);

    expect(childEnv, 'the claude process was sampled during the turn').toBeDefined();
    const allowed = new Set<string>([
      ...INHERITED_ENV_VARS,
      'HOME',
      'XDG_CONFIG_HOME',
      'XDG_CACHE_HOME',
      'XDG_DATA_HOME',
      'XDG_STATE_HOME',
      'CLAUDE_CONFIG_DIR',
      'CLAUDE_CODE_TMPDIR',
      'XDG_RUNTIME_DIR',
      'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
      'DISABLE_AUTOUPDATER',
      'DISABLE_TELEMETRY',
      'DISABLE_ERROR_REPORTING',
      'ANTHROPIC_BASE_URL',
      'ANTHROPIC_API_KEY',
      'ONE_WORKS_PASSED',
    ]);
    const names = Object.keys(childEnv!);
    expect(names.filter((name) => !allowed.has(name))).toEqual([]);
    expect(childEnv!.HOME).toBe(rig.sessionHome(id!));
    expect(childEnv!.HOST_SECRET_NOT_ALLOWED).toBeUndefined();
    expect(childEnv!.ONE_WORKS_PASSED).toBe('let-through');
    expect(names).not.toContain('ONE_WORKS_PASSED_UNSET');

    // Everything One Works wrote (state minus claude's own files in the session HOME) and printed.
    outputs.push(await rig.run(['events', id!]));
    outputs.push(await rig.run(['--json', 'sessions', 'show', id!]));
    const home = rig.sessionHome(id!);
    await rig.untilNoServer();
    const written = (await filesUnder(rig.stateDir)).filter((f) => !f.startsWith(`${home}/.claude`));
    const haystacks = [
      ...(await Promise.all(written.map(async (f) => ({ where: f, text: await readFile(f, 'latin1') })))),
      ...outputs.flatMap((o, n) => [
        { where: `stdout ${n}`, text: o.stdout },
        { where: `stderr ${n}`, text: o.stderr },
      ]),
    ];
    const encoded = [RIG_API_KEY, encodeURIComponent(RIG_API_KEY), Buffer.from(RIG_API_KEY).toString('base64')];
    const leaks = haystacks.filter((h) => encoded.some((e) => h.text.includes(e))).map((h) => h.where);
    expect(leaks).toEqual([]);
    expect(written.some((f) => f.endsWith('events.jsonl'))).toBe(true);
  });
});
