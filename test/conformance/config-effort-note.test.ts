import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { SCRIPTED_MODEL_ID } from '../support/scripted-model.js';

// Issue 19: an `effort` the user wrote in the config for a model without effort levels (droid
// lists BYOK custom models with the single effort "none") is dropped with the same note `-e`
// gives; the schema's default effort is dropped without one.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const NOTE = `model ${SCRIPTED_MODEL_ID} has no reasoning effort levels; effort "high" does not apply and is ignored`;

describe('a configured effort the model ignores', () => {
  it('is noted like -e when the config sets it, and not when it is only the default', async () => {
    const model = await rigs.model({ steps: [{ text: 'first' }, { text: 'second' }, { text: 'third' }] });
    const explicit = await rigs.create({ baseUrl: model.baseUrl, droid: { effort: 'high' } });
    const configured = await explicit.run(['run', '--no-hint', '-w', explicit.workspace, 'hello']);
    expect(configured.exitCode, configured.stderr).toBe(0);
    expect(configured.stderr).toContain(`! note: ${NOTE}`);

    const flagged = await explicit.run(['run', '--no-hint', '-e', 'high', '-w', explicit.workspace, 'hello']);
    expect(flagged.exitCode, flagged.stderr).toBe(0);
    expect(flagged.stderr).toContain(`! note: ${NOTE}`);

    const implicit = await rigs.create({ baseUrl: model.baseUrl });
    const defaulted = await implicit.run(['run', '--no-hint', '-w', implicit.workspace, 'hello']);
    expect(defaulted.exitCode, defaulted.stderr).toBe(0);
    expect(`${defaulted.stdout}\n${defaulted.stderr}`).not.toContain('reasoning effort');
  });
});
