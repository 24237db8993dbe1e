import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { RuntimeEvent } from '../../core/events/index.js';
import { type CliResult, type CliRig, CliRigs } from '../support/one-works-cli.js';
import { type AnthropicStep, startScriptedAnthropic } from '../support/scripted-anthropic.js';
import { type ResponsesStep, startScriptedResponses } from '../support/scripted-responses.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import type { Step } from '../support/scripted-model.js';
import { REFERENCE_RUNNER } from './process-runner-support.js';

// The policy decides EVERY tool call that is not read-only, whatever risk the agent declares
// (issue 17). A conformance row every adapter passes through the real `one-works run`: each
// adapter says how its model calls a command, a file creation and an edit (with the lowest risk
// label it has), and how to configure its YAML block; the rows are the same for all of them.
// Each entry brings its own scripted model (droid: the OpenAI chat one; claude-code: the Anthropic
// Messages one), its tools, its YAML block, the answer options it records and what else it must
// show. Later adapters (Codex, ACP agents, process runners) add an entry to ADAPTERS.

/** A tool call the scripted model makes, in the row's own terms (each adapter maps it to its tools). */
type Call =
  | { id: string; tool: 'execute'; command: string }
  | { id: string; tool: 'create'; path: string; content: string }
  | { id: string; tool: 'edit'; path: string; before: string; after: string };

interface PolicyConformanceAdapter {
  /** The adapter's name in one-works.yaml (and `run --adapter`). */
  name: string;
  /** The One Works answers it records in permission.decided for an allow and for a deny. */
  options: { allow: string; deny: string };
  /**
   * Starts the adapter's scripted model with one reply per call (each with the lowest risk label
   * the agent has), then a final text reply; returns the base URL for {@link configure}.
   */
  model(rigs: CliRigs, calls: Call[]): Promise<string>;
  /** Points the rig's config (parsed YAML) at `baseUrl` and sets the adapter's autonomy and policy. */
  configure(config: RigConfig, baseUrl: string, autonomy: string, policy: Record<string, unknown>): void;
  /**
   * A command line that creates `marker.txt`, and the agent's own project settings (written into
   * `workspace`) that, were they read, would let it run without asking.
   */
  workspaceAllow: { command: string; write(workspace: string): Promise<void> };
  /** A command the agent itself runs without asking by default (droid's built-in allowlist, Claude Code's read-only commands). */
  builtinAllowed: string;
  /** What the run with a `deny` entry says beyond the decision (declared limitations the policy depends on). */
  expectDenyRun(result: CliResult, events: RuntimeEvent[]): void;
}

type RigConfig = { adapters: Record<string, Record<string, unknown>> };

const droid: PolicyConformanceAdapter = {
  name: 'droid',
  // One Works answers, the same for every adapter (droid answers proceed_once / cancel natively).
  options: { allow: 'allow-once', deny: 'deny' },
  model: async (rigs, calls) => {
    const steps: Step[] = calls.map((call) => {
      switch (call.tool) {
        case 'execute':
          return {
            toolCalls: [
              { id: call.id, name: 'Execute', arguments: { command: call.command, riskLevel: 'low', riskLevelReason: 'harmless' } },
            ],
          };
        // droid's Create and Edit carry no risk label: at droid's own `low` autonomy and above they ran unasked.
        case 'create':
          return { toolCalls: [{ id: call.id, name: 'Create', arguments: { file_path: call.path, content: call.content } }] };
        default: // edit
          return {
            toolCalls: [{ id: call.id, name: 'Edit', arguments: { file_path: call.path, old_str: call.before, new_str: call.after } }],
          };
      }
    });
    return (await rigs.model({ steps: [...steps, { text: 'done' }] })).baseUrl;
  },
  configure: (config, baseUrl, autonomy, policy) => {
    const block = config.adapters.droid as { customModels: Array<{ baseUrl: string }> };
    block.customModels[0]!.baseUrl = baseUrl;
    Object.assign(config.adapters.droid!, { autonomy, policy });
  },
  workspaceAllow: {
    command: 'echo ran > marker.txt',
    write: async (workspace) => {
      await mkdir(join(workspace, '.factory'));
      await writeFile(join(workspace, '.factory', 'settings.json'), JSON.stringify({ commandAllowlist: ['echo'] }));
    },
  },
  builtinAllowed: 'ls',
  expectDenyRun: (result, events) => {
    // droid cannot be made to ask before a Task sub-agent (a declared limitation): the deny rule
    // depends on it, so the run says so on stderr and in the turn's log, and once only on the terminal.
    expect(result.stderr).toContain('warning: droid runs Task (subagent) calls without asking One Works');
    expect(`${result.stdout}${result.stderr}`.split('runs Task (subagent) calls').length - 1).toBe(1);
    expect(result.stderr).toContain('deny, writeBoundary rules do not hold for them');
    // Said before the session line, as the turn starts (it is worked out once the request went out).
    expect(result.stderr.indexOf('warning: droid runs Task')).toBeLessThan(result.stderr.search(/^session s-/m));
    const warned = events.filter((e) => e.type === 'log' && e.level === 'warn' && e.message.includes('runs Task (subagent) calls'));
    expect(warned).toHaveLength(1);
  },
};

const claudeCode: PolicyConformanceAdapter = {
  name: 'claude-code',
  // One Works answers, the same for every adapter (Claude Code answers allow / deny natively).
  options: { allow: 'allow-once', deny: 'deny' },
  model: async (rigs, calls) => {
    // Claude Code has no risk label. Its Edit refuses a file the conversation has not Read (before
    // it asks), so an edit is a Read (read-only: never asked) and then the Edit.
    const steps: AnthropicStep[] = calls.flatMap((call): AnthropicStep[] => {
      switch (call.tool) {
        case 'execute':
          return [{ toolCalls: [{ id: call.id, name: 'Bash', input: { command: call.command, description: 'run it' } }] }];
        case 'create':
          return [{ toolCalls: [{ id: call.id, name: 'Write', input: { file_path: call.path, content: call.content } }] }];
        default: // edit
          return [
            { toolCalls: [{ id: `${call.id}_read`, name: 'Read', input: { file_path: call.path } }] },
            {
              toolCalls: [{ id: call.id, name: 'Edit', input: { file_path: call.path, old_string: call.before, new_string: call.after } }],
            },
          ];
      }
    });
    const model = await startScriptedAnthropic({ steps: [...steps, { text: 'done' }] });
    rigs.defer(() => model.close());
    return model.baseUrl;
  },
  configure: (config, baseUrl, autonomy, policy) => {
    const block = config.adapters['claude-code']!;
    (block.endpoint as { baseUrl: string }).baseUrl = baseUrl;
    Object.assign(block, { autonomy, policy });
  },
  // 2.1.333 asks before a redirection into a file whatever its allow rules say (even
  // `--allowedTools "Bash(echo:*)"`), so `echo … > file` could not show a rule being ignored:
  // `touch` under `Bash(touch:*)` runs unasked when the rule is read.
  workspaceAllow: {
    command: 'touch marker.txt',
    write: async (workspace) => {
      await mkdir(join(workspace, '.claude'));
      await writeFile(join(workspace, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(touch:*)'] } }));
    },
  },

  // Claude Code runs `ls` unasked in its default permission mode (a read-only command) unless
  // told to ask about every Bash call (the adapter's `permissions.ask` rules).
  builtinAllowed: 'ls',
  // Claude Code declares no limitation: nothing to warn about.
  expectDenyRun: (result, events) => {
    expect(result.stderr).not.toContain('without asking One Works');
    expect(events.filter((e) => e.type === 'log' && e.level === 'warn')).toEqual([]);
  },
};

const processRunner: PolicyConformanceAdapter = {
  name: 'process:ref',
  options: { allow: 'allow-once', deny: 'deny' },
  model: async (rigs, calls) => {
    // The reference runner relays the model's calls to One Works' built-in workspace tools.
    const steps: Step[] = calls.map((call) => {
      switch (call.tool) {
        case 'execute':
          return { toolCalls: [{ id: call.id, name: 'run_command', arguments: { command: call.command } }] };
        case 'create':
          return { toolCalls: [{ id: call.id, name: 'write_file', arguments: { path: call.path, content: call.content } }] };
        default: // edit
          return {
            toolCalls: [{ id: call.id, name: 'edit_file', arguments: { path: call.path, old_text: call.before, new_text: call.after } }],
          };
      }
    });
    return (await rigs.model({ steps: [...steps, { text: 'done' }] })).baseUrl;
  },
  configure: (config, baseUrl, autonomy, policy) => {
    config.adapters.process = {
      policy,
      harnesses: {
        ref: { command: process.execPath, args: [REFERENCE_RUNNER], model: 'scripted', provider: { baseUrl, apiKey: 'sk-row' }, autonomy },
      },
    };
  },
  // A runner has no settings of its own in the workspace that could allow anything: the row
  // still shows the command decided by the policy.
  workspaceAllow: { command: 'touch marker.txt', write: async () => undefined },
  // Nor a built-in allowlist: `ls` is decided like any command.
  builtinAllowed: 'ls',
  // One Works runs every tool itself: no limitation to warn about.
  expectDenyRun: (result, events) => {
    expect(result.stderr).not.toContain('without asking One Works');
    expect(events.filter((e) => e.type === 'log' && e.level === 'warn')).toEqual([]);
  },
};

/** A Codex apply_patch body (its freeform patch language) for a file creation or an edit. */
function codexPatch(call: Extract<Call, { tool: 'create' | 'edit' }>): string {
  const body =
    call.tool === 'create'
      ? [
          `*** Add File: ${call.path}`,
          ...call.content
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => `+${line}`),
        ]
      : [`*** Update File: ${call.path}`, '@@', `-${call.before}`, `+${call.after}`];
  return ['*** Begin Patch', ...body, '*** End Patch', ''].join('\n');
}

/** Codex 0.171.0 offers its `apply_patch` tool only to models it knows; the scripted server answers any name. */
const CODEX_PATCH_MODEL = 'gpt-5.5';

const codex: PolicyConformanceAdapter = {
  name: 'codex',
  // One Works answers, the same for every adapter (Codex answers accept / decline natively).
  options: { allow: 'allow-once', deny: 'deny' },
  model: async (rigs, calls) => {
    // Codex has no risk label: commands are exec_command, files are apply_patch (a freeform tool).
    const steps: ResponsesStep[] = calls.map((call) =>
      call.tool === 'execute'
        ? { toolCalls: [{ name: 'exec_command', arguments: { cmd: call.command }, callId: call.id }] }
        : { customToolCalls: [{ name: 'apply_patch', input: codexPatch(call), callId: call.id }] },
    );
    const model = await startScriptedResponses({ steps: [...steps, { text: 'done' }] });
    rigs.defer(() => model.close());
    return model.baseUrl;
  },
  configure: (config, baseUrl, autonomy, policy) => {
    const block = config.adapters.codex!;
    (block.endpoint as { baseUrl: string }).baseUrl = baseUrl;
    Object.assign(block, { model: CODEX_PATCH_MODEL, autonomy, policy });
  },
  // Codex's project layer: an exec-policy rule allowing `touch`, and a config asking for nothing.
  workspaceAllow: {
    command: 'touch marker.txt',
    write: async (workspace) => {
      await mkdir(join(workspace, '.codex', 'rules'), { recursive: true });
      await writeFile(join(workspace, '.codex', 'rules', 'default.rules'), 'prefix_rule(pattern=["touch"], decision="allow")\n');
      await writeFile(join(workspace, '.codex', 'config.toml'), 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n');
    },
  },
  // Codex judges `ls` read-only; under the "untrusted" approval policy One Works starts it with, it asks all the same.
  builtinAllowed: 'ls',
  expectDenyRun: (result, events) => {
    expect(result.stderr).not.toContain('without asking One Works');
    expect(events.filter((e) => e.type === 'log' && e.level === 'warn' && !e.message.includes('Model metadata'))).toEqual([]);
  },
};

const ADAPTERS: PolicyConformanceAdapter[] = [droid, claudeCode, processRunner, codex];

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2 runs each Execute under a bash supervisor that polls for droid every 2 s.
const TOOL_LINGER_MS = 10_000;
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
  const { allow, deny } = adapter.options;
  // One rig, one scripted model and one `run`. Policy and calls may depend on the workspace path
  // (known once the rig exists): the YAML block is then rewritten before the run.
  type Of<T> = T | ((workspace: string) => T);
  async function runOne(
    autonomy: string,
    policy: Of<Record<string, unknown>>,
    calls: Of<Call[]>,
    prepare?: (workspace: string) => Promise<unknown>,
  ) {
    const rig = await rigs.create({
      baseUrl: UNSET_BASE_URL,
      ...(adapter.name === 'claude-code' ? { claude: { baseUrl: UNSET_BASE_URL } } : {}),
      ...(adapter.name === 'codex' ? { codex: { baseUrl: UNSET_BASE_URL } } : {}),
    });
    const baseUrl = await adapter.model(rigs, typeof calls === 'function' ? calls(rig.workspace) : calls);
    const config = parse(await readFile(rig.configPath, 'utf8')) as RigConfig;
    adapter.configure(config, baseUrl, autonomy, typeof policy === 'function' ? policy(rig.workspace) : policy);
    await writeFile(rig.configPath, stringify(config));
    await prepare?.(rig.workspace);
    const result = await rig.run(['run', '--adapter', adapter.name, '--workspace', rig.workspace, 'do it']);
    expect(result.exitCode, result.stderr).toBe(0);
    const id = await onlySession(rig);
    return { rig, result, id, events: await rig.readEvents(id) };
  }

  it('a deny entry stops a low-risk command at autonomy high: never run, denied by policy', async () => {
    const { rig, events, result } = await runOne('high', { deny: ['echo'] }, [
      { id: 'call_deny', tool: 'execute', command: 'echo ran > marker.txt' },
    ]);
    expect(await exists(join(rig.workspace, 'marker.txt'))).toBe(false);
    const { requested, decided } = decisions(events);
    expect(requested.map((e) => e.tools[0]?.toolUseId)).toEqual(['call_deny']);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ requestId: requested[0]!.requestId, decision: 'deny', by: 'policy', option: deny });
    expect(decided[0]?.reason).toContain("matches deny entry 'echo'");
    expect(result.stdout).toContain('permission denied by policy');
    adapter.expectDenyRun(result, events);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('autonomy low without a terminal: a low-risk command off the allowlist is escalated, declined, and the session needs attention', async () => {
    const { rig, events, id } = await runOne('low', {}, [{ id: 'call_low', tool: 'execute', command: 'echo ran > marker.txt' }]);
    expect(await exists(join(rig.workspace, 'marker.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: deny });
    expect(decided[0]?.reason).toContain('no person available');
    const record = await rig.readSession(id);
    expect(record.status).toBe('needs_attention');
    expect(record.attention?.join('\n')).toContain('execute: echo ran > marker.txt was declined');
  });

  it('an allowlisted command at autonomy low runs without asking a person: allowed by policy, file written', async () => {
    const { rig, events, id } = await runOne('low', { allow: ['echo ran'] }, [
      { id: 'call_allow', tool: 'execute', command: 'echo ran > marker.txt' },
    ]);
    expect(await readFile(join(rig.workspace, 'marker.txt'), 'utf8')).toBe('ran\n');
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'allow', by: 'policy', option: allow });
    expect(decided[0]?.reason).toContain('is on the allowlist');
    expect((await rig.readSession(id)).status).toBe('idle');
  });

  it("the workspace's own agent settings cannot make a command skip the policy", async () => {
    const { command, write } = adapter.workspaceAllow;
    const { rig, events } = await runOne('low', {}, [{ id: 'call_ws', tool: 'execute', command }], write);
    expect(await exists(join(rig.workspace, 'marker.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: deny });
    expect(decided[0]?.reason).toContain('no person available');
  });

  it(`a command the agent itself runs without asking by default (${adapter.builtinAllowed}) is decided by the deny list too`, async () => {
    const command = adapter.builtinAllowed;
    const { rig, events } = await runOne('high', { deny: [command] }, [
      { id: 'call_builtin', tool: 'execute', command: `${command} > listing.txt` },
    ]);
    expect(await exists(join(rig.workspace, 'listing.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(decided[0]?.reason).toContain(`matches deny entry '${command}'`);
  });

  it(`a plain ${adapter.builtinAllowed}, which the agent judges read-only, is asked too: decided (and denied) by the policy`, async () => {
    const command = adapter.builtinAllowed;
    const { events } = await runOne('high', { deny: [command] }, [{ id: 'call_plain', tool: 'execute', command }]);
    const { requested, decided } = decisions(events);
    expect(requested.map((e) => e.tools[0]?.toolUseId)).toEqual(['call_plain']);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ requestId: requested[0]!.requestId, decision: 'deny', by: 'policy', option: deny });
    expect(decided[0]?.reason).toContain(`matches deny entry '${command}'`);
    const result = events.find((e) => e.type === 'tool.result' && e.toolUseId === 'call_plain');
    expect(result).toMatchObject({ isError: true });
  });

  it('denyPaths stops a file creation at autonomy high: never written', async () => {
    const { rig, events } = await runOne(
      'high',
      (workspace) => ({ denyPaths: [join(workspace, 'secret')] }),
      (workspace) => [{ id: 'call_create', tool: 'create', path: join(workspace, 'secret', 'new.txt'), content: 'leaked\n' }],
      (workspace) => mkdir(join(workspace, 'secret')),
    );
    expect(await exists(join(rig.workspace, 'secret', 'new.txt'))).toBe(false);
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: deny });
    expect(decided[0]?.reason).toContain(`under denied path ${join(rig.workspace, 'secret')}`);
  });

  it('denyPaths stops an Edit at autonomy high: the file keeps its content', async () => {
    const { rig, events } = await runOne(
      'high',
      (workspace) => ({ denyPaths: [join(workspace, 'secret')] }),
      (workspace) => [{ id: 'call_edit', tool: 'edit', path: join(workspace, 'secret', 'kept.txt'), before: 'original', after: 'changed' }],
      async (workspace) => {
        await mkdir(join(workspace, 'secret'));
        await writeFile(join(workspace, 'secret', 'kept.txt'), 'original\n');
      },
    );
    expect(await readFile(join(rig.workspace, 'secret', 'kept.txt'), 'utf8')).toBe('original\n');
    const { decided } = decisions(events);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ decision: 'deny', by: 'policy', option: deny });
    expect(decided[0]?.reason).toContain('under denied path');
  });
});

describe('codex: an edit the policy allows is written (real CLI, apply_patch)', () => {
  it('an apply_patch creation and an edit outside denyPaths at autonomy high: allowed by policy, written on disk', async () => {
    const rig = await rigs.create({ baseUrl: UNSET_BASE_URL, codex: { baseUrl: UNSET_BASE_URL } });
    await mkdir(join(rig.workspace, 'secret'));
    await writeFile(join(rig.workspace, 'open.txt'), 'original\n');
    const baseUrl = await codex.model(rigs, [
      { id: 'call_new', tool: 'create', path: join(rig.workspace, 'new.txt'), content: 'created\n' },
      { id: 'call_open', tool: 'edit', path: join(rig.workspace, 'open.txt'), before: 'original', after: 'changed' },
    ]);
    const config = parse(await readFile(rig.configPath, 'utf8')) as RigConfig;
    codex.configure(config, baseUrl, 'high', { denyPaths: [join(rig.workspace, 'secret')] });
    await writeFile(rig.configPath, stringify(config));
    const result = await rig.run(['run', '--adapter', 'codex', '--workspace', rig.workspace, 'do it']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'new.txt'), 'utf8')).toBe('created\n');
    expect(await readFile(join(rig.workspace, 'open.txt'), 'utf8')).toBe('changed\n');
    const events = await rig.readEvents(await onlySession(rig));
    const { requested, decided } = decisions(events);
    expect(requested.map((e) => [e.tools[0]?.toolUseId, e.tools[0]?.kind])).toEqual([
      ['call_new', 'edit'],
      ['call_open', 'edit'],
    ]);
    expect(requested[0]?.tools[0]?.label).toContain('new.txt');
    expect(requested[1]?.tools[0]?.label).toContain('open.txt');
    expect(decided.map((e) => [e.decision, e.by, e.option])).toEqual([
      ['allow', 'policy', 'allow-once'],
      ['allow', 'policy', 'allow-once'],
    ]);
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((e) => [e.toolUseId, e.isError])).toEqual([
      ['call_new', false],
      ['call_open', false],
    ]);
  });
});
