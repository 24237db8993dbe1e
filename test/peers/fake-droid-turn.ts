import { closeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeDroidConfig } from './fake-droid-config.js';
import { zeroUsage } from './fake-droid-store.js';
import type { FakeSession, FakeTokenUsage } from './fake-droid-store.js';
import type { FakeWire } from './fake-droid-wire.js';

/** Everything one scripted turn needs. */
export interface FakeTurn {
  wire: FakeWire;
  config: FakeDroidConfig;
  session: FakeSession;
  /** Aborted by interrupt_session. */
  signal: AbortSignal;
  /** The add_user_message request id (echoed as `requestId` on the user create_message). */
  requestId: string;
  text: string;
  turnId: string;
}

/** How the turn ended: completed, cancelled by an interrupt, or left without a completion (faults). */
export type FakeTurnEnd = 'completed' | 'cancelled' | 'abandoned';

const TURN_USAGE = { inputTokens: 60, outputTokens: 4 };
const OVERSIZED_BYTES = 20 * 1024 * 1024;

// Adds this turn's usage to the session total.
function addUsage(total: FakeTokenUsage): FakeTokenUsage {
  return { ...total, inputTokens: total.inputTokens + TURN_USAGE.inputTokens, outputTokens: total.outputTokens + TURN_USAGE.outputTokens };
}

/**
 * Plays one turn the way droid 0.225.2 does for a text reply (captures/text-only-turn.jsonl),
 * with the configured faults injected. The caller has already sent the `{}` response.
 * Persists the user and assistant messages into `session.messages`.
 */
export async function playFakeTurn(turn: FakeTurn): Promise<FakeTurnEnd> {
  const { wire, config, session, signal } = turn;
  const sid = session.sessionId;
  const faults = config.faults;
  const state = (newState: string): void => wire.notify({ type: 'droid_working_state_changed', newState }, sid);
  const pause = (): Promise<void> => sleep(config.stepMs, undefined, { signal });
  const now = Date.now();
  try {
    state('streaming_assistant_message');
    let parentId = String(session.messages.at(-1)?.id ?? 'root');
    if (session.messages.length === 0) {
      const context = { id: `context-${turn.turnId}`, role: 'user', content: [], visibility: 'llm_only', createdAt: now, updatedAt: now, parentId };
      wire.notify({ type: 'create_message', message: context }, sid);
      session.messages.push(context);
      parentId = context.id;
    }
    const user = { id: turn.turnId, role: 'user', content: [{ type: 'text', text: turn.text }], createdAt: now, updatedAt: now, interactionMode: 'auto', parentId };
    wire.notify({ type: 'create_message', message: user, requestId: turn.requestId }, sid);
    session.messages.push(user);
    await pause();
    state('thinking');
    state('streaming_assistant_message');
    if (faults.has('stdout-closed-before-exit')) {
      closeSync(1);
      await sleep(config.lingerMs);
      process.exit(0);
    }
    if (faults.has('die-mid-turn')) {
      const toolUse = { type: 'tool_use', id: 'call_1_0', name: 'Execute', input: {} };
      wire.notify({ type: 'tool_call', toolUse });
      wire.notify({ type: 'tool_call', toolUse: { ...toolUse, input: { command: 'true', riskLevel: 'low' } } });
      process.stderr.write('fake-droid: dying mid-turn (FAKE_DROID_FAULT=die-mid-turn)\n');
      process.exit(1);
    }
    const messageId = randomUUID();
    const pieces = config.reply.match(/[\s\S]{1,12}/g) ?? [''];
    for (const [index, textDelta] of pieces.entries()) {
      await pause();
      wire.notify({ type: 'assistant_text_delta', messageId, blockIndex: 0, textDelta }, sid);
      if (index === 0 && faults.has('malformed-frame')) wire.raw('{"jsonrpc":"2.0","type":"notification", this is not json');
      if (index === 0 && faults.has('oversized-frame')) {
        const padding = 'x'.repeat(OVERSIZED_BYTES);
        wire.raw(JSON.stringify({ jsonrpc: '2.0', type: 'notification', factoryApiVersion: '1.0.0', method: 'droid.session_notification', params: { notification: { type: 'fake_padding', padding } } }));
      }
    }
    wire.notify({ type: 'assistant_text_complete', messageId, blockIndex: 0 }, sid);
    if (faults.has('idle-before-message')) state('idle');
    await pause();
    const assistant = { id: messageId, role: 'assistant', content: [{ type: 'text', text: config.reply }], createdAt: Date.now(), updatedAt: Date.now(), modelId: session.settings.modelId, parentId: turn.turnId };
    wire.notify({ type: 'create_message', message: assistant }, sid);
    session.messages.push(assistant);
    session.tokenUsage = addUsage(session.tokenUsage);
    const usage = { ...zeroUsage(), ...TURN_USAGE };
    wire.notify({ type: 'session_token_usage_changed', sessionId: sid, tokenUsage: session.tokenUsage, inclusiveTokenUsage: session.tokenUsage, lastCallTokenUsage: { ...TURN_USAGE, cacheReadTokens: 0 } });
    if (faults.has('unrelated-turn-id')) {
      wire.notify({ type: 'agent_turn_completed', reason: 'completed', turnId: `unrelated-${randomUUID()}`, tokenUsage: usage }, sid);
      return 'abandoned';
    }
    wire.notify({ type: 'agent_turn_completed', reason: 'completed', turnId: turn.turnId, tokenUsage: usage, cumulativeTokenUsage: session.tokenUsage, durationMs: Date.now() - now }, sid);
    state('idle');
    state('idle');
    return 'completed';
  } catch (error) {
    if (!signal.aborted) throw error;
    wire.notify({ type: 'agent_turn_completed', reason: 'cancelled', turnId: turn.turnId, tokenUsage: zeroUsage() }, sid);
    state('idle');
    return 'cancelled';
  }
}
