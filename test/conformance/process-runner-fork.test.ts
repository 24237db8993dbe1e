import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { chatMessages } from '../support/scripted-model-steps.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { HARNESS, referenceRig } from './process-runner-support.js';

// `one-works fork SESSION` of a process-runner session starts the fork from the source's
// verified checkpoint (a copy): the reference runner opens the copy, so the fork's first model
// request carries the source's native conversation (not a transcript), and the source's
// checkpoints and runner directory stay byte for byte as they were.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;

// path → SHA-256 of every file below `dir`.
async function checksums(dir: string): Promise<Record<string, string>> {
  const sums: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    sums[file.slice(dir.length)] = createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  }
  return sums;
}

const conversation = (model: ScriptedModel): string[] =>
  chatMessages(model.requests.at(-1)!)
    .slice(1)
    .map((m) => `${String(m.role)}:${String(m.content)}`);

describe('process runner: fork from a checkpoint', () => {
  it('fork --run r1: the fork opens a copy of r1’s checkpoint; its first request carries r1’s history; the source is untouched', async () => {
    const { rig, model } = await referenceRig(rigs, [
      { text: 'Noted: BRAVO-2.' },
      { text: 'Second: CHARLIE-3.' },
      { text: 'You asked BRAVO-2.' },
    ]);
    const first = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [source] = await rig.sessionIds();
    const second = await rig.run(['send', source!, 'remember CHARLIE-3']);
    expect(second.exitCode, second.stderr).toBe(0);
    await rig.closedEvents(source!, 2);
    const sourceRecord = await rig.readSession(source!);
    const sourceCheckpoints = join(rig.stateDir, 'sessions', source!, 'runner-checkpoints');
    const sourceDir = join(rig.sessionHome(source!), 'runner', sourceRecord.nativeSessionId!);
    const before = { checkpoints: await checksums(sourceCheckpoints), dir: await checksums(sourceDir) };
    expect(Object.keys(before.checkpoints)).toContain(`/${sourceRecord.nativeSessionId}/r1/files/conversation.jsonl`);

    const fork = await rig.run(['fork', source!, '--run', 'r1', 'what did I ask you to remember?']);
    expect(fork.exitCode, fork.stderr + fork.stdout).toBe(0);
    expect(fork.stdout).toContain('You asked BRAVO-2.');

    // The model saw the source's native conversation up to r1, then the prompt alone (no transcript).
    expect(conversation(model)).toEqual(['user:remember BRAVO-2', 'assistant:Noted: BRAVO-2.', 'user:what did I ask you to remember?']);
    const forkId = (await rig.sessionIds()).find((id) => id !== source)!;
    const forkRecord = await rig.readSession(forkId);
    expect(forkRecord.forkedFrom).toEqual({ sessionId: source, runId: 'r1', checkpointRun: 'r1' });
    expect(forkRecord.nativeSessionId).toBeDefined();
    expect(forkRecord.nativeSessionId).not.toBe(sourceRecord.nativeSessionId);
    expect(forkRecord.runs[0]).toMatchObject({ prompt: 'what did I ask you to remember?', status: 'completed' });
    const events = await rig.closedEvents(forkId);
    expect(events.find((e) => e.type === 'session.started')).toMatchObject({ resumed: true });
    expect(events.find((e) => e.type === 'log' && e.message.startsWith('restored the runner'))).toBeDefined();

    // The fork's own state is a copy that grew; the source's did not move.
    const forkState = await readFile(join(rig.sessionHome(forkId), 'runner', forkRecord.nativeSessionId!, 'conversation.jsonl'), 'utf8');
    expect(forkState.split('\n').filter(Boolean)).toHaveLength(4);
    expect(await checksums(sourceCheckpoints)).toEqual(before.checkpoints);
    expect(await checksums(sourceDir)).toEqual(before.dir);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('fork without --run starts from the latest checkpoint; an empty prompt asks the runner to continue', async () => {
    const { rig, model } = await referenceRig(rigs, [{ text: 'Noted: BRAVO-2.' }, { text: 'Continuing.' }]);
    const first = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'remember BRAVO-2']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [source] = await rig.sessionIds();
    await rig.closedEvents(source!);

    const fork = await rig.run(['fork', source!]);
    expect(fork.exitCode, fork.stderr + fork.stdout).toBe(0);
    expect(conversation(model)).toEqual(['user:remember BRAVO-2', 'assistant:Noted: BRAVO-2.', 'user:Continue from here.']);
    const forkId = (await rig.sessionIds()).find((id) => id !== source)!;
    expect((await rig.readSession(forkId)).forkedFrom).toEqual({ sessionId: source, checkpointRun: 'r1' });
  });
});
