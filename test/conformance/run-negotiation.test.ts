import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFileStore } from '../../core/store/index.js';
import { SessionRunner } from '../../core/session/index.js';
import { CliRigs } from '../support/one-works-cli.js';
import { realDroidRuntime } from '../support/real-droid-runtime.js';
import { SCRIPTED_MODEL_ID } from '../support/scripted-model.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// A droid that announces a protocol other than the one recorded for its version ends the
// session before any prompt; a binary outside the pinned range is refused before any session.

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

const chatCalls = (model: ScriptedModel) => model.requests.filter((r) => r.path.startsWith('/v1/chat/completions'));

describe('protocol negotiation with the real droid', () => {
  it.each([
    { version: '0.225.2', announced: '1.220.0', pinned: '1.206.0', range: '>=0.225.0 <0.226.0' },
    { version: '0.215.0', announced: '1.206.0', pinned: '1.220.0', range: '>=0.215.0 <0.216.0' },
  ])(
    'droid $version (speaks $announced) pinned to protocol $pinned: the turn fails before any prompt',
    async ({ version, announced, pinned, range }) => {
      const model = await rigs.model({ steps: [{ text: 'must never be sent' }] });
      const rig = await rigs.create({ baseUrl: model.baseUrl });
      const store = await createFileStore(rig.stateDir);
      const runner = await SessionRunner.create(
        realDroidRuntime({
          store,
          stateDir: rig.stateDir,
          baseUrl: model.baseUrl,
          droid: { binaryPath: binaries[version]!, version, range, protocolVersion: pinned },
        }),
        { workspace: rig.workspace, model: SCRIPTED_MODEL_ID, autonomy: 'low' },
      );
      let outcome: Awaited<ReturnType<typeof runner.runTurn>>;
      try {
        outcome = await runner.runTurn('this prompt must never reach droid');
      } finally {
        await runner.close();
      }

      expect(outcome).toMatchObject({ status: 'failed', reason: 'protocol_mismatch', text: '', usage: { reported: false } });
      expect(chatCalls(model)).toEqual([]);
      // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
      expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);

      const record = await rig.readSession(runner.id);
      expect(record.status).toBe('needs_attention');
      expect(record.runs).toEqual([expect.objectContaining({ id: 'r1', status: 'failed', reason: 'protocol_mismatch' })]);
      const events = await rig.readEvents(runner.id);
      expect(events.some((e) => e.type === 'session.started')).toBe(false);
      const errors = events.filter((e) => e.type === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'protocol_mismatch' });
      expect(errors[0]?.message).toContain(announced);
      expect(errors[0]?.message).toContain(pinned);
      expect(errors[0]?.message).toContain('before any prompt');

      // The CLI reads the same record back.
      const shown = await rig.run(['sessions', 'show', runner.id]);
      expect(shown.exitCode, shown.stderr).toBe(0);
      expect(shown.stdout).toContain('r1  failed (protocol_mismatch)');
    },
  );

  it('one-works run refuses a path binary outside the pinned range before any session (exit 4)', async () => {
    const model = await rigs.model({ steps: [{ text: 'must never be sent' }] });
    const binary = binaries['0.225.2']!;
    const rig = await rigs.create({ baseUrl: model.baseUrl, cli: { source: 'path', path: binary, version: '0.215.0' } });

    for (const args of [['run'], ['--json', 'run']]) {
      const result = await rig.run([...args, '--workspace', rig.workspace, 'hello']);
      expect(result.exitCode).toBe(4);
      expect(result.stdout).toBe('');
      // Without --json a `one-works: …` line; with --json one `{"error":{code,message}}` line.
      const message =
        args[0] === '--json'
          ? (JSON.parse(result.stderr.trim()) as { error: { code: string; message: string } }).error.message
          : result.stderr.split('\n').find((line) => line.startsWith('one-works: '));
      expect(message, result.stderr).toBeDefined();
      expect(message).toContain(binary);
      expect(message).toContain('is 0.225.2');
      expect(message).toContain('>=0.215.0 <0.216.0');
    }
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests).toEqual([]);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });
});
