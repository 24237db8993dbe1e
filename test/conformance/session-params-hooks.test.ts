import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// YAML `hooks` reach the real droid 0.225.2 as native hooks in the isolated settings, and each
// hook run is recorded once: one `hook` started + one completed per native hookId.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const CALL_ID = 'call_hooks_exec_1';
const COMMAND = 'echo hooked > hooked.txt';

// A hook script that appends "<label> <hook_event_name> <tool_name>" (read from its JSON stdin) to a log.
const HOOK_SCRIPT = `#!/bin/sh
payload=$(cat)
event=$(printf '%s' "$payload" | sed -n 's/.*"hook_event_name":"\\([A-Za-z]*\\)".*/\\1/p')
tool=$(printf '%s' "$payload" | sed -n 's/.*"tool_name":"\\([A-Za-z]*\\)".*/\\1/p')
printf '%s %s %s\\n' "$1" "$event" "$tool" >> "$HOOK_LOG_DIR/hooks.log"
`;

describe('YAML hooks with the real droid', () => {
  it('runs PreToolUse and PostToolUse hooks around Execute and records each hook run once', async () => {
    const model = await rigs.model({
      steps: [
        {
          toolCalls: [
            { id: CALL_ID, name: 'Execute', arguments: { command: COMMAND, riskLevel: 'low', riskLevelReason: 'writes one file' } },
          ],
        },
        { text: 'Done.' },
      ],
    });
    const dir = await rigs.tempDir('ow-hooks-');
    const script = join(dir, 'hook.sh');
    await writeFile(script, HOOK_SCRIPT.replace('$HOOK_LOG_DIR', dir), { mode: 0o755 });
    const matcher = (label: string) => [{ matcher: 'Execute', hooks: [{ type: 'command', command: `${script} ${label}`, timeout: 20 }] }];
    const rig = await rigs.create({
      baseUrl: model.baseUrl,
      // autonomy high: the policy runs the scripted command without asking a person (issue 17).
      droid: { autonomy: 'high', hooks: { PreToolUse: matcher('pre'), PostToolUse: matcher('post') } },
    });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'write the file']);
    expect(result.exitCode, result.stderr).toBe(0);
    // The scripts ran, once each, for the Execute call.
    expect((await readFile(join(dir, 'hooks.log'), 'utf8')).trim().split('\n')).toEqual([
      'pre PreToolUse Execute',
      'post PostToolUse Execute',
    ]);
    expect(await readFile(join(rig.workspace, 'hooked.txt'), 'utf8')).toBe('hooked\n');

    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    const keys = events.map((e) => e.key);
    expect(new Set(keys).size).toBe(keys.length);
    const hooks = events.filter((e): e is Extract<RuntimeEvent, { type: 'hook' }> => e.type === 'hook');
    expect(hooks.map((h) => `${h.event}:${h.phase}`)).toEqual([
      'PreToolUse:started',
      'PreToolUse:completed',
      'PostToolUse:started',
      'PostToolUse:completed',
    ]);
    const hookIds = [...new Set(hooks.map((h) => h.hookId))];
    expect(hookIds).toHaveLength(2);
    for (const hookId of hookIds) {
      expect(hooks.filter((h) => h.hookId === hookId).map((h) => h.phase)).toEqual(['started', 'completed']);
    }
    for (const hook of hooks) expect(hook.toolUseId).toBe(CALL_ID);
    expect(hooks.filter((h) => h.phase === 'completed').map((h) => h.status)).toEqual(['completed', 'completed']);
    // No other event carries the same fact: nothing else names a hook id.
    const others = events.filter((e) => e.type !== 'hook');
    for (const hookId of hookIds) expect(others.filter((e) => JSON.stringify(e).includes(hookId))).toEqual([]);
    // The hooks ran between the tool call and its result.
    const order = events.map((e) => (e.type === 'hook' ? `${e.event}:${e.phase}` : e.type));
    expect(order.indexOf('tool.call')).toBeLessThan(order.indexOf('PreToolUse:started'));
    expect(order.indexOf('PostToolUse:completed')).toBeLessThan(order.indexOf('tool.result'));
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });
});
