import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { startScriptedResponses } from '../support/scripted-responses.js';
import { twoTurnsOverMcp } from './mcp-e2e-support.js';

// MCP `create_session` with `adapter: "codex"`: the real Codex 0.171.0 behind the orchestrator
// `one-works mcp` auto-starts, a scripted Responses server as its model.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('one-works mcp with the codex adapter', () => {
  it('create_session with adapter codex runs a turn; read_session shows its answer; send_message continues the session', async () => {
    const model = await startScriptedResponses({ steps: [{ text: 'MCP says hi.' }, { text: 'Second MCP answer.' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });
    await twoTurnsOverMcp(rig, 'codex', 'scripted-model');
    // Both turns on one thread: the second model request carries the first turn.
    expect(JSON.stringify(model.requests.filter((r) => r.kind === 'step')[1]?.body)).toContain('MCP says hi.');
  });
});
