import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, RIG_API_KEY, type CliRig } from '../support/one-works-cli.js';
import { droidCustomModel } from '../support/scripted-model.js';

// `one-works run` with the real droid and a model catalog past its freshness (listed more than a
// minute ago, less than ten): a model the stale entry lists runs without a listing (no second
// droid beside the session's); a model it does not list waits for the fresh listing, which alone
// lets it through or refuses it. Each test's catalog key is its own (one more BYOK model, unique to
// it), so its entry in the shared conformance cache is found by that model's name.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

interface Entry {
  key: string;
  fetchedAt: number;
  value: { models: Array<{ id: string; displayName: string }>; tools: unknown[] };
}

// The rig's catalog entry: the one file under <cache>/catalog naming `displayName`.
async function entryFile(displayName: string): Promise<string> {
  const dir = join(process.env.ONE_WORKS_TEST_CACHE!, 'catalog');
  const files: string[] = [];
  for (const name of await readdir(dir)) {
    if (name.endsWith('.json') && (await readFile(join(dir, name), 'utf8').catch(() => '')).includes(displayName))
      files.push(join(dir, name));
  }
  expect(files).toHaveLength(1);
  return files[0]!;
}

const readEntry = async (file: string): Promise<Entry> => JSON.parse(await readFile(file, 'utf8')) as Entry;

// Makes the entry two minutes old (past its minute, within the ten a turn's check may use it), leaving out `drop`.
async function makeStale(file: string, drop?: string): Promise<number> {
  const entry = await readEntry(file);
  entry.fetchedAt = Date.now() - 120_000;
  if (drop) entry.value.models = entry.value.models.filter((m) => m.id !== drop);
  await writeFile(file, `${JSON.stringify(entry)}\n`);
  return entry.fetchedAt;
}

const at = (events: RuntimeEvent[], type: RuntimeEvent['type']): number => Date.parse(events.find((e) => e.type === type)!.at);

async function staleRig(): Promise<{ rig: CliRig; unique: ReturnType<typeof droidCustomModel>; displayName: string; file: string }> {
  const model = await rigs.model({ steps: [{ text: 'listed it' }, { text: 'stale and fine' }, { text: 'fresh one' }] });
  const scripted = droidCustomModel(model.baseUrl, { apiKey: RIG_API_KEY });
  const displayName = `Stale ${randomBytes(4).toString('hex')}`;
  const unique = droidCustomModel(model.baseUrl, { apiKey: RIG_API_KEY, displayName });
  const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { customModels: [scripted.entry, unique.entry] } });
  const first = await rig.run(['--json', 'run', '--workspace', rig.workspace, 'list the catalog']);
  expect(first.exitCode, first.stderr).toBe(0);
  return { rig, unique, displayName, file: await entryFile(displayName) };
}

describe('run with a stale model catalog (real droid)', () => {
  it('runs a model the stale entry lists without listing the catalog again', async () => {
    const { rig, file } = await staleRig();
    const staleAt = await makeStale(file);

    const result = await rig.run(['--json', 'run', '--workspace', rig.workspace, 'stale and fine']);

    expect(result.exitCode, result.stderr).toBe(0);
    const sessions = await Promise.all((await rig.sessionIds()).map((s) => rig.readSession(s)));
    const session = sessions.find((s) => s.runs[0]?.prompt === 'stale and fine')!;
    expect(session.runs[0]?.status).toBe('completed');
    // No listing ran: the entry is the one made stale, untouched, and it lists the run's model.
    const entry = await readEntry(file);
    expect(entry.fetchedAt).toBe(staleAt);
    expect(entry.value.models.map((m) => m.id)).toContain(session.runs[0]?.model);
  });

  it('waits for the fresh listing for a model the stale entry lacks: runs it when listed, refuses one never listed', async () => {
    const { rig, unique, file } = await staleRig();
    let staleAt = await makeStale(file, unique.modelId);

    const listed = await rig.run(['--json', 'run', '--workspace', rig.workspace, '--model', unique.modelId, 'fresh one']);

    expect(listed.exitCode, listed.stderr).toBe(0);
    const sessions = await Promise.all((await rig.sessionIds()).map((s) => rig.readSession(s)));
    const session = sessions.find((s) => s.runs[0]?.prompt === 'fresh one')!;
    expect(session.runs[0]).toMatchObject({ status: 'completed', model: unique.modelId });
    // Listed before the turn was queued: acceptance waited for it.
    const entry = await readEntry(file);
    expect(entry.fetchedAt).toBeGreaterThan(staleAt);
    expect(entry.fetchedAt).toBeLessThanOrEqual(at(await rig.readEvents(session.id), 'turn.queued'));
    expect(entry.value.models.map((m) => m.id)).toContain(unique.modelId);

    staleAt = await makeStale(file);
    const before = await rig.sessionIds();
    const refused = await rig.run(['--json', 'run', '--workspace', rig.workspace, '--model', 'custom:Nope-0', 'never sent']);

    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toMatch(/custom:Nope-0/);
    expect((await readEntry(file)).fetchedAt).toBeGreaterThan(staleAt);
    expect(await rig.sessionIds()).toEqual(before);
  });
});
