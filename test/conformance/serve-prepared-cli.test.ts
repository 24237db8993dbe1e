import { existsSync } from 'node:fs';
import { mkdir, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { byPrompt, until } from './orchestrator-rig.js';

// Issue 15: `one-works serve` prepares the default adapter's CLI in idle time, once it listens,
// and keeps a prepared CLI for later sessions; each session checks at use that the binary is
// still the same file. Here droid is configured by path (a symlink, with a range that admits both
// pinned versions) and switched from 0.225.2 to 0.215.0 between two runs on a server started by
// hand: the second session must run the new binary with its own version facts (protocol
// 1.206.0), not the prepared 0.225.2 ones (its first frame would then end it as a mismatch).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

describe('one-works serve: the prepared CLI', () => {
  it('is used only while its binary is the same file: a replaced droid is prepared again for the next session', async () => {
    const model = await rigs.model({
      steps: byPrompt({ 'first turn': () => ({ text: 'first reply' }), 'second turn': () => ({ text: 'second reply' }) }),
    });
    const bin = join(await rigs.tempDir('ow-prepared-cli-'), 'bin');
    await mkdir(bin);
    const droid = join(bin, 'droid');
    await symlink(process.env.ONE_WORKS_TEST_DROID!, droid);
    const rig = await rigs.create({
      baseUrl: model.baseUrl,
      cli: { source: 'path', path: droid, version: '0.225.2', range: '>=0.215.0 <0.226.0' },
    });
    const server = rig.start(['serve']);
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));

    const first = await rig.run(['run', '--workspace', rig.workspace, 'first turn']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('first reply');
    const [firstId] = await rig.sessionIds();
    expect((await rig.readSession(firstId!)).cliVersion).toBe('0.225.2');

    // The link now names droid 0.215.0 (replaced in one rename, as an upgrade would).
    await symlink(process.env.ONE_WORKS_TEST_DROID_0215!, `${droid}.next`);
    await rename(`${droid}.next`, droid);

    const second = await rig.run(['run', '--workspace', rig.workspace, 'second turn']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('second reply');
    const secondId = (await rig.sessionIds()).find((id) => id !== firstId)!;
    expect((await rig.readSession(secondId)).cliVersion).toBe('0.215.0');
    const started = (await rig.closedEvents(secondId)).find((event) => event.type === 'session.started');
    expect(started).toMatchObject({ cliVersion: '0.215.0', versionFacts: { protocolVersion: '1.206.0' } });
    // Both turns ran on the server started by hand (none was started in the background).
    expect(rig.servers().map((p) => p.pid)).toEqual([server.pid]);

    server.kill('SIGTERM');
    const exit = await server.result;
    expect(exit.exitCode, exit.stderr).toBe(0);
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });
});
