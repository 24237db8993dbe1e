import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs } from '../support/one-works-cli.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { chatMessages, contentText } from '../support/scripted-model-steps.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// YAML `systemPrompt` and `rules` reach the real droid 0.225.2 as initialize_session's
// `systemPrompt: {type: preset, preset: droid, append}`, and from there the model's system
// message; `plugins` are reported as skipped. A resumed session keeps its creation prompt.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const PROMPT_MARKER = 'PROMPT-MARKER-7c1: answer tersely.';
const RULE_MARKER = 'RULE-MARKER-9d2: indent with tabs.';

// The system message of each conversation request (side requests such as titles excluded).
function systemMessages(model: ScriptedModel): string[] {
  return model.requests
    .filter((request) => request.kind === 'step')
    .map((request) => {
      const first = chatMessages(request)[0];
      return first?.role === 'system' ? contentText(first.content) : '';
    });
}

const logs = (events: RuntimeEvent[]) => events.flatMap((e) => (e.type === 'log' ? [e] : []));

describe('YAML systemPrompt and rules with the real droid', () => {
  it("appends them to droid's system prompt, labels the rules file, and warns about plugins", async () => {
    const model = await rigs.model({ steps: [{ text: 'One.' }, { text: 'Two.' }] });
    const dir = await rigs.tempDir('ow-prompt-');
    const rules = join(dir, 'STYLE.md');
    await writeFile(rules, `${RULE_MARKER}\n`);
    const rig = await rigs.create({
      baseUrl: model.baseUrl,
      droid: { systemPrompt: PROMPT_MARKER, rules: [rules], plugins: ['some-plugin'] },
    });

    const first = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [system] = systemMessages(model);
    // droid's preset prompt comes first, then the YAML text in order (droid 0.225.2 puts the
    // append before its closing TodoWrite section, so it is not the very end).
    const appended = `\n\n${PROMPT_MARKER}\n\nInstructions from STYLE.md (${rules}):\n${RULE_MARKER}\n`;
    expect(system).toContain(appended);
    expect(system!.indexOf(appended)).toBeGreaterThan(1000);

    const [id] = await rig.sessionIds();
    const warnings = logs(await rig.readEvents(id!)).filter((e) => e.message.includes('plugin'));
    expect(warnings).toMatchObject([{ level: 'warn', message: 'plugin some-plugin skipped: no session-scoped injection' }]);
    // Nothing was installed into (or read from) the user's real HOME.
    await expect(access(join(rig.userHome, '.factory'))).rejects.toMatchObject({ code: 'ENOENT' });

    // Resumed with changed rules: droid keeps the creation prompt, and One Works says so.
    await writeFile(rules, 'RULE-MARKER-changed\n');
    const second = await rig.run(['send', id!, 'again']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(systemMessages(model)[1]).toContain(RULE_MARKER);
    expect(systemMessages(model)[1]).not.toContain('RULE-MARKER-changed');
    const kept = logs(await rig.readEvents(id!)).filter((e) => e.message.includes('keeps the prompt'));
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ level: 'warn' });
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });

  it('fails the session start with config_invalid naming a missing rules file, before any model call', async () => {
    const model = await rigs.model({ steps: [{ text: 'never sent' }] });
    const dir = await rigs.tempDir('ow-prompt-');
    const missing = join(dir, 'missing-rules.md');
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { rules: [missing] } });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toContain(`rules file ${missing} (adapters.droid.rules[0]) does not exist`);
    expect(result.stdout).toContain('failed (config_invalid)');
    expect(model.requests.filter((request) => request.kind === 'step')).toEqual([]);
    const [id] = await rig.sessionIds();
    const errors = (await rig.readEvents(id!)).filter((e) => e.type === 'error' || e.type === 'turn.completed');
    expect(JSON.stringify(errors)).toContain('config_invalid');
    expect(await readFile(join(rig.stateDir, 'sessions', id!, 'events.jsonl'), 'utf8')).toContain(missing);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });
});
