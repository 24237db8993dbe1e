import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { chatMessages, contentText } from '../support/scripted-model-steps.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// YAML `skills` are copied into the session home's .factory/skills/<name>/, where the real droid
// 0.225.2 finds them as personal skills and lists them to the model; `disableBuiltinSkills`
// leaves only those.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const DESCRIPTION = 'Writes release notes in the house style.';
const SKILL_MD = `---\nname: release-notes\ndescription: ${DESCRIPTION}\n---\nCollect the merged changes, then write the notes.\n`;

// A skill directory with a SKILL.md and an executable helper script.
async function skillDir(): Promise<string> {
  const dir = join(await rigs.tempDir('ow-skills-'), 'release-notes');
  await mkdir(join(dir, 'scripts'), { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), SKILL_MD);
  await writeFile(join(dir, 'scripts', 'collect.sh'), '#!/bin/sh\ngit log --oneline\n', { mode: 0o755 });
  return dir;
}

// The lines of the "Available skills" reminder droid put into the first conversation request.
function listedSkills(model: ScriptedModel): string[] {
  const request = model.requests.find((r) => r.kind === 'step');
  const text = request
    ? chatMessages(request)
        .map((message) => contentText(message.content))
        .join('\n')
    : '';
  const start = text.indexOf('Available skills');
  if (start < 0) return [];
  const block = text.slice(text.indexOf('\n', start) + 1, text.indexOf('</system-reminder>', start));
  return block.split('\n').filter((line) => line.trim() !== '');
}

describe('YAML skills with the real droid', () => {
  it('copies a skill into the session home and droid offers it to the model', async () => {
    const model = await rigs.model({ steps: [{ text: 'Noted.' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { skills: [await skillDir()] } });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const copy = join(rig.sessionHome(id!), '.factory', 'skills', 'release-notes');
    expect(await readFile(join(copy, 'SKILL.md'), 'utf8')).toBe(SKILL_MD);
    expect((await stat(join(copy, 'scripts', 'collect.sh'))).mode & 0o777).toBe(0o700);
    const listed = listedSkills(model);
    expect(listed).toContain(`release-notes: ${DESCRIPTION}`);
    // droid's built-in skills are listed too (not disabled).
    expect(listed.length).toBeGreaterThan(1);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });

  it('with disableBuiltinSkills, lists only the YAML skill', async () => {
    const model = await rigs.model({ steps: [{ text: 'Noted.' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { skills: [await skillDir()], disableBuiltinSkills: true } });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(listedSkills(model)).toEqual([`release-notes: ${DESCRIPTION}`]);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });
});
