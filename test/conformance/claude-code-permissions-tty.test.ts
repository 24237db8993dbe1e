import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { runInPty } from '../support/pty-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { type AnthropicStep, anthropicToolResults, startScriptedAnthropic } from '../support/scripted-anthropic.js';

// One Works' answer choices on the real Claude Code 2.1.333, from a person at the terminal:
// `one-works run --adapter claude-code` on a pseudo-terminal, autonomy low, so the policy
// escalates the Bash call and the person types the answer.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const CHOICES = String.raw`\[y\] allow once  \[a\] allow for this session  \[n\] deny\s+> `;
const APPEND = 'echo hi >> f.txt';

const bash = (id: string): AnthropicStep => ({ toolCalls: [{ id, name: 'Bash', input: { command: APPEND, description: 'append' } }] });

describe('claude-code: permission asked on the terminal', () => {
  it('allow for the session (a): the second identical call is not asked again, allowed by the recorded approval', async () => {
    const model = await startScriptedAnthropic({ steps: [bash('toolu_first'), bash('toolu_second'), { text: 'done' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl } });
    // A second prompt would be answered n; the driver reports that it never appeared.
    const pty = await runInPty(
      rig,
      ['run', '--adapter', 'claude-code', '--workspace', rig.workspace, 'append twice'],
      [
        { expect: CHOICES, send: 'a\r' },
        { expect: CHOICES, send: 'n\r' },
      ],
    );
    expect(pty.exitCode, pty.screen).toBe(0);
    expect(pty.diagnostics).toContain('never saw');
    expect(pty.screen).not.toContain(RIG_API_KEY);
    expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\nhi\n');

    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    // Claude Code asked both times (its ask rule for Bash): the policy, not the CLI, let the second run.
    const requested = events.filter((e) => e.type === 'permission.requested');
    expect(requested.map((e) => [e.tools[0]?.toolUseId, e.options])).toEqual([
      ['toolu_first', ['allow-once', 'allow-session', 'deny']],
      ['toolu_second', ['allow-once', 'allow-session', 'deny']],
    ]);
    const decided = events.filter((e) => e.type === 'permission.decided');
    expect(decided).toHaveLength(2);
    expect(decided[0]).toMatchObject({
      decision: 'allow',
      by: 'human',
      channel: 'terminal',
      option: 'allow-session',
      nativeOption: 'allow',
    });
    expect(decided[1]).toMatchObject({
      decision: 'allow',
      by: 'policy',
      option: 'allow-once',
      reason: `command '${APPEND}' was approved for this session`,
    });
    expect((await rig.readSession(id!)).sessionAllows).toEqual([`execute:${APPEND}`]);
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps.flatMap((r) => anthropicToolResults(r)).map((r) => [r.toolUseId, r.isError])).toEqual([
      ['toolu_first', false],
      ['toolu_first', false],
      ['toolu_second', false],
    ]);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
