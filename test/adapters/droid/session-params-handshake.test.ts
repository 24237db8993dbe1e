import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DroidConfig } from '../../../adapters/droid/config.js';
import { expectNoProcessLeft, ofType, useSessionHarnesses, type SessionHarness } from '../../support/session-harness.js';

// The droid session's handshake with the fake droid: which YAML keys become which native
// params of initialize_session / load_session, and what a start reports.
const harness = useSessionHarnesses();
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function configure(h: SessionHarness, extra: Partial<DroidConfig>): void {
  h.runtime.adapterConfig = { ...(h.runtime.adapterConfig as DroidConfig), ...extra };
}

async function paramsOf(h: SessionHarness, method: string): Promise<Record<string, unknown>[]> {
  return (await h.received()).filter((frame) => frame.method === method).map((frame) => frame.params as Record<string, unknown>);
}

describe('droid session: session parameters in the handshake', () => {
  it('initializes with the composed systemPrompt and disableBuiltinSkills, and warns about plugins', async () => {
    const h = await harness();
    const dir = await mkdtemp(join(tmpdir(), 'ow-handshake-'));
    dirs.push(dir);
    await writeFile(join(dir, 'STYLE.md'), 'Use tabs.');
    configure(h, { systemPrompt: 'Be brief.', rules: [join(dir, 'STYLE.md')], disableBuiltinSkills: true, plugins: ['p1'] });
    const runner = await h.create();
    const outcome = await runner.runTurn('hello');
    await runner.close();

    expect(outcome.status).toBe('completed');
    const [init] = await paramsOf(h, 'droid.initialize_session');
    expect(init).toMatchObject({
      interactionMode: 'auto',
      disableBuiltinSkills: true,
      systemPrompt: {
        type: 'preset',
        preset: 'droid',
        append: `Be brief.\n\nInstructions from STYLE.md (${join(dir, 'STYLE.md')}):\nUse tabs.`,
      },
    });
    expect(Object.keys(init!).filter((key) => key.startsWith('worktree') || key === 'missionSettings')).toEqual([]);
    const logged = await h.logged(runner.id);
    expect(ofType(logged, 'log').filter((e) => e.message.startsWith('plugin'))).toMatchObject([
      { level: 'warn', message: 'plugin p1 skipped: no session-scoped injection' },
    ]);
    await expectNoProcessLeft(h.pid());
  });

  it('loads a resumed session with disableBuiltinSkills and no systemPrompt', async () => {
    const h = await harness();
    configure(h, { systemPrompt: 'Be brief.', disableBuiltinSkills: true });
    const created = await h.create();
    await created.runTurn('first');
    await created.close();

    const resumed = await h.resume(created.id);
    const outcome = await resumed.runTurn('second');
    await resumed.close();

    expect(outcome.status).toBe('completed');
    const loads = await paramsOf(h, 'droid.load_session');
    expect(loads).toHaveLength(1);
    expect(loads[0]).toMatchObject({ disableBuiltinSkills: true });
    expect(loads[0]).not.toHaveProperty('systemPrompt');
    await expectNoProcessLeft(h.pid());
  });

  it('fails the turn as config_invalid when a rules file is missing, and stops the child', async () => {
    const h = await harness();
    configure(h, { rules: ['/nonexistent/one-works/RULES.md'] });
    const runner = await h.create();
    const outcome = await runner.runTurn('must never reach the agent');
    await runner.close();

    expect(outcome).toMatchObject({ status: 'failed', reason: 'config_invalid' });
    const logged = await h.logged(runner.id);
    expect(ofType(logged, 'error').map((e) => e.message)).toEqual([
      expect.stringContaining('rules file /nonexistent/one-works/RULES.md (adapters.droid.rules[0]) does not exist'),
    ]);
    expect(await h.receivedMethods()).not.toContain('droid.add_user_message');
    await expectNoProcessLeft(h.pid());
  });
});
