import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

/**
 * A fake ACP agent on the SDK's agent side (`AgentSideConnection` over stdio), for what real
 * agents do not do on demand. It answers every prompt with `fake reply: <prompt>`. Faults, from
 * FAKE_ACP_FAULT (comma-separated):
 *   no-load            initialize does not advertise loadSession
 *   unknown-update     sends a session/update of a kind no ACP version defines
 *   unseen-permission  asks permission for a tool call it never announced; when allowed, writes
 *                      unseen.txt in the session cwd and completes the call (with terminal
 *                      content although the client declared no terminal), else fails it
 *   plan               sends a plan update
 *   crash              exits with code 3 in the middle of a prompt
 * It advertises MCP over stdio and http (not sse). FAKE_ACP_MCP_LOG, when set, gets one JSON line
 * per session/new and session/load: `{method, mcpServers}` as received.
 */
const faults = new Set((process.env.FAKE_ACP_FAULT ?? '').split(',').filter((f) => f !== ''));

function logMcp(method: string, mcpServers: unknown): void {
  const log = process.env.FAKE_ACP_MCP_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ method, mcpServers })}\n`);
}

class FakeAgent implements acp.Agent {
  readonly #conn: acp.AgentSideConnection;
  readonly #cwd = new Map<string, string>();
  #next = 0;

  constructor(conn: acp.AgentSideConnection) {
    this.#conn = conn;
  }

  initialize(): acp.InitializeResponse {
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: !faults.has('no-load'), mcpCapabilities: { http: true, sse: false } },
      agentInfo: { name: 'fake-acp-agent', version: '0.0.1' },
      authMethods: [],
    };
  }

  newSession(params: acp.NewSessionRequest): acp.NewSessionResponse {
    logMcp('session/new', params.mcpServers);
    this.#next += 1;
    const sessionId = `fake-session-${process.pid}-${this.#next}`;
    this.#cwd.set(sessionId, params.cwd);
    return { sessionId };
  }

  loadSession(params: acp.LoadSessionRequest): acp.LoadSessionResponse {
    logMcp('session/load', params.mcpServers);
    this.#cwd.set(params.sessionId, params.cwd);
    return {};
  }

  authenticate(): void {}

  async prompt(params: acp.PromptRequest): Promise<acp.PromptResponse> {
    const sessionId = params.sessionId;
    const text = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
    const say = (chunk: string) =>
      this.#conn.sessionUpdate({ sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: chunk } } });
    if (faults.has('plan')) {
      await this.#conn.sessionUpdate({
        sessionId,
        update: { sessionUpdate: 'plan', entries: [{ content: 'say hello', priority: 'high', status: 'pending' }] },
      });
    }
    if (faults.has('unknown-update')) {
      await this.#conn.sessionUpdate({ sessionId, update: { sessionUpdate: 'hologram_update', shimmer: 7 } as never });
    }
    if (faults.has('unseen-permission')) {
      const toolCall = {
        toolCallId: 'tc-unseen-1',
        title: 'write unseen.txt',
        kind: 'execute' as const,
        rawInput: { command: 'touch unseen.txt' },
      };
      const answer = await this.#conn.requestPermission({
        sessionId,
        toolCall,
        options: [
          { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
          { optionId: 'always', name: 'Always', kind: 'allow_always' },
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        ],
      });
      const allowed = answer.outcome.outcome === 'selected' && answer.outcome.optionId === 'yes';
      if (allowed) writeFileSync(join(this.#cwd.get(sessionId) ?? process.cwd(), 'unseen.txt'), 'ran\n');
      await this.#conn.sessionUpdate({
        sessionId,
        update: {
          sessionUpdate: 'tool_call_update',
          toolCallId: 'tc-unseen-1',
          status: allowed ? 'completed' : 'failed',
          content: [
            { type: 'terminal', terminalId: 'term-1' },
            { type: 'content', content: { type: 'text', text: allowed ? 'wrote unseen.txt' : 'rejected' } },
          ],
        },
      });
    }
    await say('fake reply: ');
    if (faults.has('crash')) process.exit(3);
    await say(text);
    // The credential the client passed, echoed so a test sees it arrived (and is redacted).
    if (process.env.FAKE_ACP_KEY) await say(` (key ${process.env.FAKE_ACP_KEY})`);
    return { stopReason: 'end_turn' };
  }

  cancel(): void {}
}

const stream = acp.ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);
new acp.AgentSideConnection((conn) => new FakeAgent(conn), stream);
