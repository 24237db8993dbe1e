import { describe, expect, it } from 'vitest';
import {
  expectNoProcessLeft,
  expectTurnRecorded,
  ofType,
  useSessionHarnesses,
  type SessionHarness,
} from '../../support/session-harness.js';

// Titles and labels with the fake droid: labels reach initialize_session as droid tags (never
// load_session), and a native rename that droid refuses is a logged `false` that changes
// neither the record nor the recorded turn.
const harness = useSessionHarnesses();

async function paramsOf(h: SessionHarness, method: string): Promise<Record<string, unknown>[]> {
  return (await h.received()).filter((frame) => frame.method === method).map((frame) => frame.params as Record<string, unknown>);
}

describe('droid session: title and tags', () => {
  it('sends labels as tags [{name}] (each once) and the title at creation, and keeps the labels in the record', async () => {
    const h = await harness();
    const runner = await h.create({ title: 'My title', tags: ['team:core', 'demo', 'demo'] });
    const outcome = await runner.runTurn('hello');
    await runner.close();

    expect(outcome.status).toBe('completed');
    const [init] = await paramsOf(h, 'droid.initialize_session');
    expect(init).toMatchObject({ title: 'My title', tags: [{ name: 'team:core' }, { name: 'demo' }] });
    const record = await h.store.readSession(runner.id);
    expect(record).toMatchObject({ title: 'My title', labels: ['team:core', 'demo', 'demo'] });
    await expectNoProcessLeft(h.pid());
  });

  it('sends no tags without labels, and none when a later process loads the session', async () => {
    const h = await harness();
    const plain = await h.create();
    await plain.runTurn('first');
    await plain.close();
    const tagged = await h.create({ tags: ['demo'] });
    await tagged.runTurn('first');
    await tagged.close();
    const resumed = await h.resume(tagged.id);
    expect((await resumed.runTurn('second')).status).toBe('completed');
    await resumed.close();

    const inits = await paramsOf(h, 'droid.initialize_session');
    expect(inits.map((params) => params.tags)).toEqual([undefined, [{ name: 'demo' }]]);
    const loads = await paramsOf(h, 'droid.load_session');
    expect(loads).toHaveLength(1);
    expect(loads[0]).not.toHaveProperty('tags');
    expect(h.children).toHaveLength(3);
    for (const index of [0, 1, 2]) await expectNoProcessLeft(h.pid(index));
  });

  it('renameNative after a turn: droid refuses the rename, the runner returns false, logs it, and the turn stays as recorded', async () => {
    const h = await harness();
    const runner = await h.create({ title: 'My title' });
    const outcome = await runner.runTurn('hello');
    const before = await h.store.readSession(runner.id);

    // The fake droid answers droid.rename_session with -32603 "does not simulate".
    expect(await runner.renameNative('Renamed')).toBe(false);
    const renames = await paramsOf(h, 'droid.rename_session');
    expect(renames).toEqual([{ title: 'Renamed' }]);
    await runner.close();

    await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    const after = await h.store.readSession(runner.id);
    expect({ title: after.title, status: after.status, runs: after.runs }).toEqual({
      title: before.title,
      status: before.status,
      runs: before.runs,
    });
    const logs = ofType(await h.logged(runner.id), 'log').filter((event) => event.message.startsWith('native rename'));
    expect(logs).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining('(peer_error)') })]);
    expect(logs[0]?.message).toContain('fake-droid does not simulate droid.rename_session');
    await expectNoProcessLeft(h.pid());
  });

  it('renameNative starts no droid: false before the first turn and after close', async () => {
    const h = await harness();
    const runner = await h.create({ title: 'My title' });
    expect(await runner.renameNative('Too early')).toBe(false);
    expect(h.children).toEqual([]);
    const logs = ofType(await h.logged(runner.id), 'log');
    expect(logs).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining('(connection_closed)') })]);

    await runner.runTurn('hello');
    await runner.close();
    expect(await runner.renameNative('Too late')).toBe(false);
    expect(await h.receivedMethods()).not.toContain('droid.rename_session');
    expect(h.children).toHaveLength(1);
    await expectNoProcessLeft(h.pid());
  });
});
