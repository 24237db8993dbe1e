import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { geminiTranscript, startScriptedGemini } from '../support/scripted-gemini.js';
import { twoTurnsOverMcp } from './mcp-e2e-support.js';

// MCP `create_session` with `adapter: "gemini"`: the real Gemini CLI 0.61.0 behind the orchestrator
// `one-works mcp` auto-starts, a scripted Gemini server as its model.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('one-works mcp with the gemini adapter', () => {
  it('create_session with adapter gemini runs a turn; read_session shows its answer; send_message continues the session', async () => {
    const model = await startScriptedGemini({ steps: [{ text: 'MCP says hi.' }, { text: 'Second MCP answer.' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl } });
    await twoTurnsOverMcp(rig, 'gemini', 'scripted');
    // One conversation: the second model request carries the first turn (warm agent or session/load).
    expect(geminiTranscript(model.requests.filter((r) => r.kind === 'step')[1]!)).toContain('MCP says hi.');
  });
});
