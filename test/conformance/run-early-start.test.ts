import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { findProcesses, type RigProcess, waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import { droidCustomModel } from '../support/scripted-model.js';

// `one-works run` with the real droid: the session's droid starts while acceptance lists the
// model catalog (an early start). The catalog here is cold (one more BYOK model, unique to this
// test, makes its cache key new), so the listing runs droid once more and takes a while; the
// session's own droid is up meanwhile. When the listing then refuses the model, that droid is
// stopped and nothing of the session remains.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const isDroid = (p: RigProcess): boolean => p.args.includes(' exec --input-format stream-jsonrpc');

// How long the server may take to stop the refused session's droid after the CLI exited.
const STOP_MS = 15_000;

describe('run: the droid started while the catalog is listed', () => {
  it('is stopped when the listing refuses the model: no droid, no session directory, no session', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const scripted = droidCustomModel(model.baseUrl, { apiKey: RIG_API_KEY });
    const unique = droidCustomModel(model.baseUrl, { apiKey: RIG_API_KEY, displayName: `Cold ${randomBytes(4).toString('hex')}` });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { customModels: [scripted.entry, unique.entry] } });
    const sessions = join(rig.stateDir, 'sessions');

    const run = rig.start(['run', '--workspace', rig.workspace, '--model', 'custom:Nope-0', 'never sent']);
    // A droid whose HOME is a session's, while the listing (in a throwaway HOME elsewhere) runs.
    const seen = await waitForProcess(() => findProcesses(sessions), isDroid);
    const result = await run.result;

    expect(seen.filter(isDroid).length).toBeGreaterThanOrEqual(1);
    expect(result.exitCode, result.stderr).not.toBe(0);
    expect(result.stderr).toMatch(/custom:Nope-0/);
    expect(await waitForNoProcesses(() => findProcesses(sessions), STOP_MS)).toEqual([]);
    expect(await readdir(sessions).catch(() => [])).toEqual([]);
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests.filter((r) => r.kind === 'step')).toEqual([]);
  });
});
