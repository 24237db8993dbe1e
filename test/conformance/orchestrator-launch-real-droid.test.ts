import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { socketPath } from '../../cli/daemon/wire.js';
import type { CatalogModel } from '../../core/catalog/index.js';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { droidCustomModel, lastUserText, SCRIPTED_MODEL_ID } from '../support/scripted-model.js';
import { byPrompt, until } from './orchestrator-rig.js';

// `one-works serve` with the real droid and its live catalog (two BYOK models pointing at one
// scripted model server): metadata in the record, launch defaults resolved at acceptance,
// request-key replay of settings, bounded reads and usage, all through the control socket.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// What the catalog implies for a model picked without an effort: its default, none for a model
// without effort levels, or a refusal (effort_required) when it lists efforts but no default.
function impliedEffort(model: CatalogModel): { effort: string | undefined } | 'effort_required' {
  if (model.efforts.length === 0 || (model.efforts.length === 1 && model.efforts[0] === 'none')) return { effort: undefined };
  return model.defaultEffort === undefined ? 'effort_required' : { effort: model.defaultEffort };
}

describe('orchestrator launch defaults and session metadata with the real droid', () => {
  it('keeps title and labels, inherits a read-only autonomy, gives a new model its catalog effort, replays settings, reads bounded events and sums usage', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'first job': () => ({ text: 'first done' }),
        'second job': () => ({ text: 'second done' }),
        'third job': () => ({ text: 'third done' }),
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
      const otherModel = models.find((m) => m.id === other.modelId);
      expect(otherModel, JSON.stringify(models.map((m) => m.id))).toMatchObject({ custom: true, disabled: false });
      expect(models.some((m) => m.id === SCRIPTED_MODEL_ID)).toBe(true);
      expect(await client.info()).toMatchObject({ approvedRoots: [rig.workspace], adapters: expect.arrayContaining([expect.objectContaining({ name: 'droid', model: SCRIPTED_MODEL_ID, autonomy: 'high' })]) });
      const scriptedModel = models.find((m) => m.id === SCRIPTED_MODEL_ID)!;
      const configured = (await client.info()).adapters.find((a) => a.name === 'droid')!;
      // The default model at the configured effort, unless the catalog says it has no effort levels.
      const firstEffort = impliedEffort(scriptedModel) === 'effort_required' || scriptedModel.efforts.some((e) => e !== 'none') ? configured.effort : undefined;

      const create = { adapter: 'droid', workspace: rig.workspace, prompt: 'first job', title: 'Launch check', labels: ['team:infra', 'conformance'], autonomy: 'off' as const, requestKey: 'create-launch-1' };
      const first = await client.createSession(create);
      expect(first.settings).toEqual({ model: SCRIPTED_MODEL_ID, ...(firstEffort === undefined ? {} : { effort: firstEffort }), autonomy: 'off' });
      const id = first.sessionId;
      expect(await client.waitForRun(id, first.runId)).toMatchObject({ runStatus: 'completed', text: 'first done' });
      expect(await rig.readSession(id)).toMatchObject({ title: 'Launch check', labels: ['team:infra', 'conformance'] });

      // A follow-up without settings inherits the session's last turn: autonomy off, not the host's high.
      const second = await client.sendMessage({ sessionId: id, prompt: 'second job' });
      expect(second.settings).toEqual(first.settings);
      expect(await client.waitForRun(id, second.runId)).toMatchObject({ runStatus: 'completed', text: 'second done' });

      // A new model without an effort: what the catalog says about that model, never the old effort.
      const implied = impliedEffort(otherModel!);
      const switching = { sessionId: id, prompt: 'third job', model: other.modelId };
      if (implied === 'effort_required') {
        await expect(client.sendMessage(switching)).rejects.toMatchObject({ code: 'effort_required' });
        return;
      }
      const third = await client.sendMessage(switching);
      expect(third.settings).toEqual({ model: other.modelId, ...(implied.effort === undefined ? {} : { effort: implied.effort }), autonomy: 'off' });
      expect(await client.waitForRun(id, third.runId)).toMatchObject({ runStatus: 'completed', text: 'third done' });
      const record = await rig.readSession(id);
      expect(record.runs.map((run) => [run.id, run.status, run.model, run.effort, run.autonomy])).toEqual([
        ['r1', 'completed', SCRIPTED_MODEL_ID, firstEffort, 'off'],
        ['r2', 'completed', SCRIPTED_MODEL_ID, firstEffort, 'off'],
        ['r3', 'completed', other.modelId, implied.effort, 'off'],
      ]);
      // What droid itself was told: each turn's model reached the model server.
      const usedModel = (prompt: string): unknown =>
        (model.requests.find((r) => r.kind === 'step' && lastUserText(r).includes(prompt))?.body as { model?: unknown } | undefined)?.model;
      expect([usedModel('first job'), usedModel('second job'), usedModel('third job')]).toEqual(['scripted', 'scripted', 'other-scripted']);
      // An unknown model is refused before anything is recorded.
      await expect(client.sendMessage({ sessionId: id, prompt: 'never', model: 'custom:Nope-0' })).rejects.toMatchObject({ code: 'model_unavailable' });

      // The request key replays the original handle, settings included.
      expect(await client.createSession(create)).toEqual(first);

      // Reads: the newest persisted events, no deltas, bounded by count and by bytes.
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

      // Usage: the sum of what the runs recorded.
      const runsWithUsage = record.runs.filter((run) => run.usage?.reported);
      const usage = await client.usage([id]);
      expect(usage.sessions).toEqual([expect.objectContaining({ sessionId: id, runs: runsWithUsage.length })]);
      const summed = (field: 'inputTokens' | 'outputTokens'): number => runsWithUsage.reduce((sum, run) => sum + (run.usage?.[field] ?? 0), 0);
      if (runsWithUsage.length > 0) expect(usage.total).toMatchObject({ reported: true, inputTokens: summed('inputTokens'), outputTokens: summed('outputTokens') });
      else expect(usage.total).toEqual({ reported: false });

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
