import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import type { Step } from '../support/scripted-model.js';

// The policy decides EVERY tool call that is not read-only, whatever risk the agent declares
// (issue 17). A conformance row every adapter passes through the real `one-works run`: each
// adapter says how its model calls a command, a file creation and an edit (with the lowest risk
// label it has), and how to configure its YAML block; the rows are the same for all of them.
// Later adapters (Claude Code, Codex, ACP agents, process runners) add an entry to ADAPTERS.

interface PolicyConformanceAdapter {
  /** The adapter's name in one-works.yaml. */
  name: string;
  /** Its YAML block (merged over the rig's) for an autonomy level and a policy. */
  block(autonomy: string, policy: Record<string, unknown>): Record<string, unknown>;
  /** A model step that runs `command` as a shell command, declared low-risk. */
  execute(id: string, command: string): Step;
  /** A model step that creates `path` with `content`, declared low-risk where the agent has such a label. */
  create(id: string, path: string, content: string): Step;
  /** A model step that replaces `before` with `after` in `path`. */
  edit(id: string, path: string, before: string, after: string): Step;
  /** Writes the agent's own project settings into `workspace` so that they allow `command` without asking. */
  allowInWorkspace(workspace: string, command: string): Promise<void>;
}

const droid: PolicyConformanceAdapter = {
  name: 'droid',
  block: (autonomy, policy) => ({ autonomy, policy }),
  execute: (id, command) => ({
    toolCalls: [{ id, name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'harmless' } }],
  }),
  // droid's Create and Edit carry no risk label: at droid's own `low` autonomy and above they ran unasked.
  create: (id, path, content) => ({ toolCalls: [{ id, name: 'Create', arguments: { file_path: path, content } }] }),
  edit: (id, path, before, after) => ({
    toolCalls: [{ id, name: 'Edit', arguments: { file_path: path, old_str: before, new_str: after } }],
  }),
  allowInWorkspace: async (workspace, command) => {
    await mkdir(join(workspace, '.factory'));
    await writeFile(join(workspace, '.factory', 'settings.json'), JSON.stringify({ commandAllowlist: [command] }));
  },
};

const ADAPTERS: PolicyConformanceAdapter[] = [droid];

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2 runs each Execute under a bash supervisor that polls for droid every 2 s.
const TOOL_LINGER_MS = 10_000;
const DONE: Step = { text: 'done' };
// The rigs' model entry points here until the scripted model of the test exists (nothing listens).
const UNSET_BASE_URL = 'http://127.0.0.1:9/v1';

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

// The decisions of the run, with the request they answer.
function decisions(events: RuntimeEvent[]) {
  const requested = events.filter((e) => e.type === 'permission.requested');
  const decided = events.filter((e) => e.type === 'permission.decided');
  return { requested, decided };
}

async function onlySession(rig: CliRig): Promise<string> {
  const ids = await rig.sessionIds();
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

describe.each(ADAPTERS)('the policy decides every call that is not read-only ($name, real CLI)', (adapter) => {
  // One rig, one scripted model and one `run`. Policy and steps may depend on the workspace path
  // (known once the rig exists): the YAML block is then rewritten before the run.
  type Of<T> = T | ((workspace: string) => T);
  async function runOne(
    autonomy: string,
    policy: Of<Record<string, unknown>>,
    steps: Of<Step[]>,
    prepare?: (workspace: string) => Promise<unknown>,
  ) {
    const rig = await rigs.create({ baseUrl: UNSET_BASE_URL });
    const model = await rigs.model({ steps: typeof steps === 'function' ? steps(rig.workspace) : steps });
    const config = parse(await readFile(rig.configPath, 'utf8')) as { adapters: Record<string, Record<string, unknown>> };
    const block = config.adapters.droid as { customModels: Array<{ baseUrl: string }> };
    block.customModels[0]!.baseUrl = model.baseUrl;
    Object.assign(config.adapters[adapter.name]!, adapter.block(autonomy, typeof policy === 'function' ? policy(rig.workspace) : policy));
    await writeFile(rig.configPath, stringify(config));
    await prepare?.(rig.workspace);
    const result = await rig.run(['run', '--workspace', rig.workspace, 'do it']);
    expect(result.exitCode, result.stderr).toBe(0);
    const id = await onlySession(rig);
    return { rig, model, result, id, events: await rig.readEvents(id) };
  }

  it('a deny entry stops a low-risk command at autonomy high: never run, denied by policy', async () => {
    const { rig, events, result } = await runOne('high', { deny: ['echo'] }, [adapter.execute('call_deny', 'echo ran > marker.txt'), DONE]);
    expect(await exists(join(rig.workspace, 'marker.txt'))).toBe(false);
    const { requested, decided } = decisions(events);
    expect(requested.map((e) => e.tools[0]?.toolUseId)).toEqual(['call_deny']);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ requestId: requested[0]!.requestId, decision: 'deny', by: 'policy', option: 'cancel' });
    expect(decided[0]?.reason).toContain("matches deny entry 'echo'");
    expect(result.stdout).toContain('permission denied by policy');
    // droid cannot be made to ask before a Task sub-agent (a declared limitation): the deny rule
    // depends on it, so the run says so on stderr and in the turn's log.
    expect(result.stderr).toContain('warning: droid runs Task (subagent) calls without asking One Works');
    expect(result.stderr).toContain('deny, writeBoundary rules do not hold for them');
    const warned = events.filter((e) => e.type === 'log' && e.level === 'warn' && e.message.includes('runs Task (subagent) calls'));
    expect(warned).toHaveLength(1);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('autonomy low without a terminal: a low-risk command off the allowlist is escalated, declined, and the session needs attention', async () => {
    const { rig, events, id } = await runOne('low', {}, [adapter.execute('call_low', 'echo ran > marker.txt'), DONE]);
    expect(await exists(join(rig.workspace, 'marker.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: 'cancel' });
    expect(decided[0]?.reason).toContain('no person available');
    const record = await rig.readSession(id);
    expect(record.status).toBe('needs_attention');
    expect(record.attention?.join('\n')).toContain('execute: echo ran > marker.txt was declined');
  });

  it('an allowlisted command at autonomy low runs without asking a person: allowed by policy, file written', async () => {
    const { rig, events, id } = await runOne('low', { allow: ['echo ran'] }, [
      adapter.execute('call_allow', 'echo ran > marker.txt'),
      DONE,
    ]);
    expect(await readFile(join(rig.workspace, 'marker.txt'), 'utf8')).toBe('ran\n');
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'allow', by: 'policy', option: 'proceed_once' });
    expect(decided[0]?.reason).toContain('is on the allowlist');
    expect((await rig.readSession(id)).status).toBe('idle');
  });

  it("the workspace's own agent settings cannot make a command skip the policy", async () => {
    const { rig, events } = await runOne('low', {}, [adapter.execute('call_ws', 'echo ran > marker.txt'), DONE], (workspace) =>
      adapter.allowInWorkspace(workspace, 'echo'),
    );
    expect(await exists(join(rig.workspace, 'marker.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: 'cancel' });
    expect(decided[0]?.reason).toContain('no person available');
  });

  it("a command the agent itself runs without asking by default (droid's `ls`) is decided by the deny list too", async () => {
    const { rig, events } = await runOne('high', { deny: ['ls'] }, [adapter.execute('call_ls', 'ls > listing.txt'), DONE]);
    expect(await exists(join(rig.workspace, 'listing.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(decided[0]?.reason).toContain("matches deny entry 'ls'");
  });

  it('denyPaths stops a Create the agent makes without a risk label, at autonomy high: never written', async () => {
    const { rig, events } = await runOne(
      'high',
      (workspace) => ({ denyPaths: [join(workspace, 'secret')] }),
      (workspace) => [adapter.create('call_create', join(workspace, 'secret', 'new.txt'), 'leaked\n'), DONE],
      (workspace) => mkdir(join(workspace, 'secret')),
    );
    expect(await exists(join(rig.workspace, 'secret', 'new.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: 'cancel' });
    expect(decided[0]?.reason).toContain(`under denied path ${join(rig.workspace, 'secret')}`);
  });

  it('denyPaths stops an Edit at autonomy high: the file keeps its content', async () => {
    const { rig, events } = await runOne(
      'high',
      (workspace) => ({ denyPaths: [join(workspace, 'secret')] }),
      (workspace) => [adapter.edit('call_edit', join(workspace, 'secret', 'kept.txt'), 'original', 'changed'), DONE],
      async (workspace) => {
        await mkdir(join(workspace, 'secret'));
        await writeFile(join(workspace, 'secret', 'kept.txt'), 'original\n');
      },
    );
    expect(await readFile(join(rig.workspace, 'secret', 'kept.txt'), 'utf8')).toBe('original\n');
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: 'cancel' });
    expect(decided[0]?.reason).toContain('under denied path');
  });
});
