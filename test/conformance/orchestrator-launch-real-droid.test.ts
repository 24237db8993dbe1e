import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { droidCustomModel, lastUserText, SCRIPTED_MODEL_ID } from '../support/scripted-model.js';
import { byPrompt, until } from './orchestrator-rig.js';

// `one-works serve` with the real droid and its live catalog (two BYOK models pointing at one
// scripted model server): metadata in the record, launch defaults resolved at acceptance,
// request-key replay of settings, bounded reads and usage, all through the control socket.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2's settings file of a native session, under the session's HOME.
async function nativeSettings(home: string, nativeId: string): Promise<Record<string, unknown>> {
  const sessions = join(home, '.factory', 'sessions');
  const found = (await readdir(sessions, { recursive: true })).filter((name) => name.endsWith(`${nativeId}.settings.json`));
  expect(found, `settings files under ${sessions}`).toHaveLength(1);
  return JSON.parse(await readFile(join(sessions, found[0]!), 'utf8')) as Record<string, unknown>;
}

// What the scripted model reports for each turn's main request (droid adds side requests, such
// as the session title's, whose default usage it may count into the same turn).
const USAGE = [
  { prompt_tokens: 101, completion_tokens: 11 },
  { prompt_tokens: 102, completion_tokens: 12 },
  { prompt_tokens: 103, completion_tokens: 13 },
] as const;

describe('orchestrator launch defaults and session metadata with the real droid', () => {
  it('keeps title and labels, inherits a read-only autonomy, gives a new model its catalog effort, replays settings, reads bounded events and sums usage', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'first job': () => ({ text: 'first done', usage: USAGE[0] }),
        'second job': () => ({ text: 'second done', usage: USAGE[1] }),
        'third job': () => ({ text: 'third done', usage: USAGE[2] }),
      }),
    });
    const scripted = droidCustomModel(model.baseUrl, { apiKey: RIG_API_KEY });
    const other = droidCustomModel(model.baseUrl, { apiKey: RIG_API_KEY, displayName: 'Other' });
    other.entry.model = 'other-scripted';
    // Host default autonomy high: a follow-up of a read-only session must not get it.
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high', customModels: [scripted.entry, other.entry] } });
    const server = rig.start(['serve']);
    await until(() => existsSync(socketPath(rig.stateDir)));
    const client = (await tryConnect(socketPath(rig.stateDir))) as OrchestratorClient;
    expect(client).toBeDefined();
    try {
      // The live catalog, as acceptance checks it.
      const models = await client.models('droid');
      expect(
        models.find((m) => m.id === other.modelId),
        JSON.stringify(models.map((m) => m.id)),
      ).toMatchObject({ custom: true, disabled: false });
      expect(models.some((m) => m.id === SCRIPTED_MODEL_ID)).toBe(true);
      expect(await client.info()).toMatchObject({
        approvedRoots: [rig.workspace],
        adapters: expect.arrayContaining([expect.objectContaining({ name: 'droid', model: SCRIPTED_MODEL_ID, autonomy: 'high' })]),
      });
      // droid 0.225.2 lists BYOK custom models with the single effort "none": no effort levels,
      // so no effort is part of their turns' settings (whatever is configured).
      for (const id of [SCRIPTED_MODEL_ID, other.modelId]) {
        expect(models.find((m) => m.id === id)).toMatchObject({ custom: true, efforts: ['none'], defaultEffort: 'none' });
      }

      const create = {
        adapter: 'droid',
        workspace: rig.workspace,
        prompt: 'first job',
        title: 'Launch check',
        labels: ['team:infra', 'conformance'],
        autonomy: 'off' as const,
        requestKey: 'create-launch-1',
      };
      const first = await client.createSession(create);
      expect(first.settings).toEqual({ model: SCRIPTED_MODEL_ID, autonomy: 'off' });
      const id = first.sessionId;
      expect(await client.waitForRun(id, first.runId)).toMatchObject({ runStatus: 'completed', text: 'first done' });
      expect(await rig.readSession(id)).toMatchObject({ title: 'Launch check', labels: ['team:infra', 'conformance'] });

      // A follow-up without settings inherits the session's last turn: autonomy off, not the host's high.
      const second = await client.sendMessage({ sessionId: id, prompt: 'second job' });
      expect(second.settings).toEqual(first.settings);
      expect(await client.waitForRun(id, second.runId)).toMatchObject({ runStatus: 'completed', text: 'second done' });

      // droid itself always runs at off (issue 17: it asks, One Works' policy decides at the run's
      // autonomy, which the run records above): its per-session settings file says so.
      const native = (await rig.readSession(id)).nativeSessionId!;
      expect(await nativeSettings(rig.sessionHome(id), native)).toMatchObject({ autonomyLevel: 'off' });

      // A new model without an effort: what the catalog says about that model (no levels).
      const third = await client.sendMessage({ sessionId: id, prompt: 'third job', model: other.modelId });
      expect(third.settings).toEqual({ model: other.modelId, autonomy: 'off' });
      expect(await client.waitForRun(id, third.runId)).toMatchObject({ runStatus: 'completed', text: 'third done' });
      const record = await rig.readSession(id);
      expect(record.runs.map((run) => [run.id, run.status, run.model, run.effort, run.autonomy])).toEqual([
        ['r1', 'completed', SCRIPTED_MODEL_ID, undefined, 'off'],
        ['r2', 'completed', SCRIPTED_MODEL_ID, undefined, 'off'],
        ['r3', 'completed', other.modelId, undefined, 'off'],
      ]);
      // What droid itself was told: each turn's model reached the model server.
      const usedModel = (prompt: string): unknown =>
        (model.requests.find((r) => r.kind === 'step' && lastUserText(r).includes(prompt))?.body as { model?: unknown } | undefined)?.model;
      expect([usedModel('first job'), usedModel('second job'), usedModel('third job')]).toEqual(['scripted', 'scripted', 'other-scripted']);
      // An unknown model is refused before anything is recorded.
      await expect(client.sendMessage({ sessionId: id, prompt: 'never', model: 'custom:Nope-0' })).rejects.toMatchObject({
        code: 'model_unavailable',
      });

      // The request key replays the original handle, settings included.
      expect(await client.createSession(create)).toEqual(first);

      // Reads: the newest persisted events, no deltas, bounded by count and by bytes. The log
      // still grows until the idle session's droid is stopped (session.closed): read after that,
      // so both reads see the same log.
      await until(async () => (await rig.readEvents(id)).at(-1)?.type === 'session.closed');
      const logged = await rig.readEvents(id);
      const recent = await client.readSession({ sessionId: id, maxEvents: 5 });
      expect(recent.events).toEqual(logged.slice(-5));
      expect(recent.eventsTruncated).toBe(true);
      expect(recent.latestRun).toMatchObject({ runId: 'r3', status: 'completed', text: 'third done', settings: third.settings });
      expect(recent.summary).toMatchObject({ title: 'Launch check', labels: ['team:infra', 'conformance'], state: 'idle' });
      const small = await client.readSession({ sessionId: id, maxEvents: 200, maxBytes: 4_000 });
      expect(Buffer.byteLength(small.events.map((e) => JSON.stringify(e)).join(''))).toBeLessThanOrEqual(4_000);
      expect(small.events.length).toBeGreaterThan(0);
      const all = await client.readSession({ sessionId: id, maxEvents: 200 });
      expect(all.events.some((e) => e.type.endsWith('.delta'))).toBe(false);
      expect(all.events.filter((e) => e.type === 'turn.completed')).toHaveLength(3);

      // Usage: every run reported at least what the scripted model sent for it, and the report
      // is the exact sum of what the runs recorded.
      record.runs.forEach((run, index) => {
        expect(run.usage?.reported, run.id).toBe(true);
        expect(run.usage?.inputTokens).toBeGreaterThanOrEqual(USAGE[index]!.prompt_tokens);
        expect(run.usage?.outputTokens).toBeGreaterThanOrEqual(USAGE[index]!.completion_tokens);
      });
      const usage = await client.usage([id]);
      expect(usage.sessions).toEqual([expect.objectContaining({ sessionId: id, runs: 3 })]);
      const summed = (field: 'inputTokens' | 'outputTokens'): number =>
        record.runs.reduce((sum, run) => sum + (run.usage?.[field] ?? 0), 0);
      expect(usage.total).toMatchObject({ reported: true, inputTokens: summed('inputTokens'), outputTokens: summed('outputTokens') });

      expect(await client.updateSession({ sessionId: id, archived: true })).toMatchObject({ archived: true, title: 'Launch check' });
      expect((await client.list()).find((s) => s.sessionId === id)).toMatchObject({ archived: true });
    } finally {
      await client.close();
      server.kill('SIGTERM');
      const exit = await server.result;
      expect(exit.exitCode, exit.stderr).toBe(0);
      expect(() => process.kill(server.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
      expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
    }
  });
});
