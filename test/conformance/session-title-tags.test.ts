import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { SessionRunner } from '../../core/session/index.js';
import { createFileStore } from '../../core/store/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { realDroidRuntime } from '../support/real-droid-runtime.js';
import { startRawDroid } from '../support/raw-droid-client.js';
import { SCRIPTED_MODEL_ID } from '../support/scripted-model.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// Titles and labels with the real droid (0.225.2 and 0.215.0): labels become droid session tags at creation,
// renameNative after the first turn renames the native session, and droid's own files (and a
// load_session in a fresh droid process) show that title and those tags.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

interface DroidVersion {
  version: string;
  variable: string;
  range: string;
  protocolVersion: string;
  /** Observed: 0.215.0 stores the tags in the session's settings file but its load_session result leaves them out. */
  loadShowsTags: boolean;
}
const VERSIONS: DroidVersion[] = [
  { version: '0.225.2', variable: 'ONE_WORKS_TEST_DROID', range: '>=0.225.0 <0.226.0', protocolVersion: '1.220.0', loadShowsTags: true },
  {
    version: '0.215.0',
    variable: 'ONE_WORKS_TEST_DROID_0215',
    range: '>=0.215.0 <0.216.0',
    protocolVersion: '1.206.0',
    loadShowsTags: false,
  },
];
const binaries = new Map<string, string>();
beforeAll(() => {
  for (const { version, variable } of VERSIONS) {
    const value = process.env[variable];
    if (!value)
      throw new Error(`${variable} is not set: run this file in the vitest conformance project (its global setup installs droid)`);
    binaries.set(version, value);
  }
});

const TAGS = ['team:core', 'demo'];
const NATIVE_TAGS = [{ name: 'team:core' }, { name: 'demo' }];

async function createRunner(droid: DroidVersion, rig: CliRig, baseUrl: string, options: { title?: string }): Promise<SessionRunner> {
  return SessionRunner.create(
    realDroidRuntime({
      store: await createFileStore(rig.stateDir),
      stateDir: rig.stateDir,
      baseUrl,
      droid: {
        binaryPath: binaries.get(droid.version)!,
        version: droid.version,
        range: droid.range,
        protocolVersion: droid.protocolVersion,
      },
    }),
    { workspace: rig.workspace, model: SCRIPTED_MODEL_ID, autonomy: 'low', tags: TAGS, ...options },
  );
}

/** droid's own files for `nativeId` under the session HOME: the journal's first line and the per-session settings. */
async function droidFiles(home: string, nativeId: string): Promise<{ start: Record<string, unknown>; settings: Record<string, unknown> }> {
  const sessions = join(home, '.factory', 'sessions');
  for (const slug of await readdir(sessions)) {
    const files = await readdir(join(sessions, slug));
    if (!files.includes(`${nativeId}.jsonl`)) continue;
    const journal = await readFile(join(sessions, slug, `${nativeId}.jsonl`), 'utf8');
    const settings = await readFile(join(sessions, slug, `${nativeId}.settings.json`), 'utf8');
    return {
      start: JSON.parse(journal.split('\n')[0]!) as Record<string, unknown>,
      settings: JSON.parse(settings) as Record<string, unknown>,
    };
  }
  throw new Error(`no journal of droid session ${nativeId} under ${sessions}`);
}

/** What a fresh droid process reports when it loads the session from the same HOME. */
async function loadInFreshDroid(binary: string, rig: CliRig, home: string, nativeId: string): Promise<{ title: unknown; tags: unknown }> {
  const droid = await startRawDroid({ binary, cwd: rig.workspace, home });
  try {
    const loaded = (await droid.request('droid.load_session', { sessionId: nativeId })) as {
      session?: { title?: unknown };
      settings?: { tags?: unknown };
    };
    return { title: loaded.session?.title, tags: loaded.settings?.tags };
  } finally {
    await droid.close();
    expect(() => process.kill(droid.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  }
}

const titleEvents = (events: RuntimeEvent[]) =>
  events.flatMap((e) =>
    e.type === 'settings.changed' && typeof e.settings.title === 'string' ? [[e.settings.title, e.settings.titleSource]] : [],
  );

describe.each(VERSIONS)('session titles and tags with the real droid $version', (droid) => {
  it('renames an untitled session after its first turn; droid keeps that title over its automatic ones, with the tags', async () => {
    const model = await rigs.model({ steps: [{ text: 'Hello back.' }], titleReply: 'Scripted title' });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const runner = await createRunner(droid, rig, model.baseUrl, {});
    let renamed: boolean;
    try {
      expect(await runner.runTurn('first question')).toMatchObject({ status: 'completed', text: 'Hello back.' });
      renamed = await runner.renameNative('My title');
    } finally {
      await runner.close();
    }
    expect(renamed).toBe(true);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);

    const record = await rig.readSession(runner.id);
    expect(record).toMatchObject({ labels: TAGS, status: 'idle' });
    expect(record.title).toBeUndefined();
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([['r1', 'completed']]);
    const events = await rig.readEvents(runner.id);
    // droid titled the session from the first message itself (as settings.changed before the
    // rename, or as an info log after it); in One Works' view the last title is the manual one.
    expect(events.filter((e) => e.key.startsWith('title:first_user_message:'))).toHaveLength(1);
    expect(titleEvents(events).at(-1)).toEqual(['My title', 'manual_rename']);
    expect(events.filter((e) => e.type === 'log' && e.message.startsWith('native rename'))).toEqual([]);

    const home = rig.sessionHome(runner.id);
    const nativeId = record.nativeSessionId!;
    const files = await droidFiles(home, nativeId);
    expect(files.start).toMatchObject({ type: 'session_start', id: nativeId, title: 'My title', isSessionTitleManuallySet: true });
    expect(files.settings.tags).toEqual(NATIVE_TAGS);
    expect(await loadInFreshDroid(binaries.get(droid.version)!, rig, home, nativeId)).toEqual({
      title: 'My title',
      tags: droid.loadShowsTags ? NATIVE_TAGS : undefined,
    });
  });

  it('a session created with a title has it in droid from the start, and renameNative with the same title confirms it', async () => {
    const model = await rigs.model({ steps: [{ text: 'Hello back.' }], titleReply: 'Scripted title' });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const runner = await createRunner(droid, rig, model.baseUrl, { title: 'My title' });
    let renamed: boolean;
    try {
      expect(await runner.runTurn('first question')).toMatchObject({ status: 'completed' });
      renamed = await runner.renameNative('My title');
    } finally {
      await runner.close();
    }
    expect(renamed).toBe(true);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);

    const record = await rig.readSession(runner.id);
    expect(record).toMatchObject({ title: 'My title', labels: TAGS });
    // No automatic title ever replaced it in One Works' view.
    expect(titleEvents(await rig.readEvents(runner.id)).filter(([title]) => title !== 'My title')).toEqual([]);
    const home = rig.sessionHome(runner.id);
    const files = await droidFiles(home, record.nativeSessionId!);
    expect(files.start).toMatchObject({ title: 'My title', isSessionTitleManuallySet: true });
    expect(files.settings.tags).toEqual(NATIVE_TAGS);
    expect(await loadInFreshDroid(binaries.get(droid.version)!, rig, home, record.nativeSessionId!)).toEqual({
      title: 'My title',
      tags: droid.loadShowsTags ? NATIVE_TAGS : undefined,
    });
  });
});
