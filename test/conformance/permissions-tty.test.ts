import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, RIG_API_KEY, type CliRig } from '../support/one-works-cli.js';
import { isAlive, waitForNoProcesses } from '../support/rig-processes.js';
import { runInPty, type PtyResult } from '../support/pty-cli.js';
import { toolResults, type Step } from '../support/scripted-model.js';

// The same escalated Execute as permissions-policy.test.ts, but `one-works run` runs on a
// pseudo-terminal, so the policy's escalation reaches the person, who types the answer.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2 runs each Execute under a bash supervisor that polls for droid every 2 s.
const TOOL_LINGER_MS = 10_000;
const COMMAND = 'echo hi > f.txt';
// The choices line, then the input marker: the answer is typed once the prompt waits for it.
const CHOICES = String.raw`\[y\] allow once  \[a\] allow for this session  \[n\] deny\s+> `;

const steps = (): Step[] => [
  {
    toolCalls: [
      { id: 'call_tty', name: 'Execute', arguments: { command: COMMAND, riskLevel: 'medium', riskLevelReason: 'writes a file' } },
    ],
  },
  (request) => ({ text: `Tool said: ${toolResults(request)[0]?.content.trim() ?? '(nothing)'}` }),
];

async function runAnswering(key: string): Promise<{ rig: CliRig; pty: PtyResult; id: string }> {
  const model = await rigs.model({ steps: steps() });
  const rig = await rigs.create({ baseUrl: model.baseUrl });
  const pty = await runInPty(rig, ['run', '--workspace', rig.workspace, 'make a file'], [{ expect: CHOICES, send: `${key}\r` }]);
  expect(pty.diagnostics, pty.screen).toBe('');
  const [id] = await rig.sessionIds();
  return { rig, pty, id: id! };
}

// The CLI, the driver and everything droid started are gone.
async function expectNothingLeft(rig: CliRig, pty: PtyResult): Promise<void> {
  expect(isAlive(pty.pid)).toBe(false);
  expect(isAlive(pty.driverPid)).toBe(false);
  expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
}

describe('permission asked on the terminal, real droid', () => {
  it('shows the tool and the reason, and runs it after y (decided by the person)', async () => {
    const { rig, pty, id } = await runAnswering('y');
    expect(pty.exitCode, pty.screen).toBe(0);
    expect(pty.screen).toContain(`execute: ${COMMAND}`);
    expect(pty.screen).toContain("needs autonomy high (is low): 'echo hi > f.txt' is not on the allowlist");
    expect(pty.screen).not.toContain(RIG_API_KEY);

    const events = await rig.readEvents(id);
    expect(events.filter((e) => e.type.startsWith('permission.')).map((e) => e.type)).toEqual([
      'permission.requested',
      'permission.decided',
    ]);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'allow', by: 'human', option: 'allow-once' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_tty', isError: false });
    expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\n');
    const record = await rig.readSession(id);
    expect(record.status).toBe('idle');
    expect(record.runs[0]).toMatchObject({ status: 'completed' });
    await expectNothingLeft(rig, pty);
  });

  it('denies after n (decided by the person): the tool fails and writes nothing', async () => {
    const { rig, pty, id } = await runAnswering('n');
    expect(pty.exitCode, pty.screen).toBe(0);
    const events = await rig.readEvents(id);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny', by: 'human', option: 'deny' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_tty', isError: true });
    expect(
      await access(join(rig.workspace, 'f.txt')).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    // A person decided, so nothing is left for anyone to attend to.
    expect((await rig.readSession(id)).status).toBe('idle');
    await expectNothingLeft(rig, pty);
  });

  it('remembers a for the rest of the session: the same command is allowed by policy without asking again', async () => {
    const append = 'echo hi >> f.txt';
    const execute = (id: string): Step => ({
      toolCalls: [{ id, name: 'Execute', arguments: { command: append, riskLevel: 'medium', riskLevelReason: 'writes a file' } }],
    });
    const model = await rigs.model({ steps: [execute('call_first'), execute('call_second'), { text: 'done' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    // A second prompt would be answered n; the driver reports that it never appeared.
    const pty = await runInPty(
      rig,
      ['run', '--workspace', rig.workspace, 'append twice'],
      [
        { expect: CHOICES, send: 'a\r' },
        { expect: CHOICES, send: 'n\r' },
      ],
    );
    expect(pty.exitCode, pty.screen).toBe(0);
    expect(pty.diagnostics).toContain('never saw');
    const [id] = await rig.sessionIds();
    const decided = (await rig.readEvents(id!)).filter((e) => e.type === 'permission.decided');
    expect(decided).toHaveLength(2);
    expect(decided[0]).toMatchObject({
      decision: 'allow',
      by: 'human',
      option: 'allow-session',
      nativeOption: 'proceed_once',
      reason: 'allowed for this session by the person at the terminal',
    });
    expect(decided[1]).toMatchObject({
      decision: 'allow',
      by: 'policy',
      option: 'allow-once',
      reason: `command '${append}' was approved for this session`,
    });
    expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\nhi\n');
    await expectNothingLeft(rig, pty);
  });

  it('abandons the open prompt on Ctrl-C: the tool is denied, the CLI exits and leaves nothing running', async () => {
    const { rig, pty, id } = await runAnswering('\x03');
    const events = await rig.readEvents(id);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({
      decision: 'deny',
      by: 'policy',
      reason: expect.stringContaining('abandoned'),
    });
    expect(
      await access(join(rig.workspace, 'f.txt')).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    expect(pty.screen).toContain('interrupting the turn');
    expect(pty.exitCode, pty.screen).toBe(130);
    // The person interrupted the turn themselves: nothing is left for them to attend to.
    expect((await rig.readSession(id)).status).toBe('idle');
    await expectNothingLeft(rig, pty);
  });
});
