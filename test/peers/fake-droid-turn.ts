import { closeSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
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

// The hidden context message (first turn only) and the user's message, linked by parentId.
function announceUserMessage(turn: FakeTurn, now: number): void {
  const { wire, session } = turn;
  let parentId = String(session.messages.at(-1)?.id ?? 'root');
  if (session.messages.length === 0) {
    const context = { id: `context-${turn.turnId}`, role: 'user', content: [], visibility: 'llm_only', parentId };
    wire.notify({ type: 'create_message', message: { ...context, createdAt: now, updatedAt: now } }, session.sessionId);
    session.messages.push(context);
    parentId = context.id;
  }
  const content = [{ type: 'text', text: turn.text }];
  const user = { id: turn.turnId, role: 'user', content, createdAt: now, updatedAt: now, interactionMode: 'auto', parentId };
  wire.notify({ type: 'create_message', message: user, requestId: turn.requestId }, session.sessionId);
  session.messages.push(user);
}

// Faults that end the process before the reply: they never return.
async function dieIfAsked(turn: FakeTurn): Promise<void> {
  const { wire, config } = turn;
  if (config.faults.has('stdout-closed-before-exit')) {
    closeSync(1);
    await sleep(config.lingerMs);
    process.exit(0);
  }
  if (config.faults.has('die-before-reply') || (config.faults.has('die-before-reply-once') && firstDeath())) {
    process.stderr.write('fake-droid: dying before the reply (FAKE_DROID_FAULT=die-before-reply)\n');
    process.exit(1);
  }
  if (config.faults.has('die-mid-turn')) {
    const toolUse = { type: 'tool_use', id: 'call_1_0', name: 'Execute', input: {} };
    wire.notify({ type: 'tool_call', toolUse });
    wire.notify({ type: 'tool_call', toolUse: { ...toolUse, input: { command: 'true', riskLevel: 'low' } } });
    process.stderr.write('fake-droid: dying mid-turn (FAKE_DROID_FAULT=die-mid-turn)\n');
    process.exit(1);
  }
}

// True the first time a process of this HOME asks (`die-before-reply-once`); leaves a marker file.
function firstDeath(): boolean {
  const dir = join(process.env.HOME ?? homedir(), '.fake-droid');
  const marker = join(dir, 'died-once');
  if (existsSync(marker)) return false;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(marker, `${process.pid}\n`);
  return true;
}

// Text deltas in 12-character pieces, with the frame faults after the first one.
async function streamReply(turn: FakeTurn, messageId: string, pause: () => Promise<void>): Promise<void> {
  const { wire, config } = turn;
  const pieces = config.reply.match(/[\s\S]{1,12}/g) ?? [''];
  for (const [index, textDelta] of pieces.entries()) {
    await pause();
    wire.notify({ type: 'assistant_text_delta', messageId, blockIndex: 0, textDelta }, turn.session.sessionId);
    if (index > 0) continue;
    if (config.faults.has('malformed-frame')) wire.raw('{"jsonrpc":"2.0","type":"notification", this is not json');
    if (config.faults.has('oversized-frame')) {
      const notification = { type: 'fake_padding', padding: 'x'.repeat(OVERSIZED_BYTES) };
      const frame = { jsonrpc: '2.0', type: 'notification', factoryApiVersion: '1.0.0', method: 'droid.session_notification' };
      wire.raw(JSON.stringify({ ...frame, params: { notification } }));
    }
  }
  wire.notify({ type: 'assistant_text_complete', messageId, blockIndex: 0 }, turn.session.sessionId);
}

/**
 * Plays one turn the way droid 0.225.2 does for a text reply (captures/text-only-turn.jsonl),
 * with the configured faults injected. The caller has already sent the `{}` response.
 * Persists the user and assistant messages into `session.messages`.
 */
export async function playFakeTurn(turn: FakeTurn): Promise<FakeTurnEnd> {
  const { wire, config, session, signal } = turn;
  const sid = session.sessionId;
  const state = (newState: string): void => wire.notify({ type: 'droid_working_state_changed', newState }, sid);
  const pause = (): Promise<void> => sleep(config.stepMs, undefined, { signal });
  const started = Date.now();
  try {
    state('streaming_assistant_message');
    announceUserMessage(turn, started);
    await pause();
    state('thinking');
    state('streaming_assistant_message');
    await dieIfAsked(turn);
    const messageId = randomUUID();
    await streamReply(turn, messageId, pause);
    if (config.faults.has('idle-before-message')) state('idle');
    await pause();
    const content = [{ type: 'text', text: config.reply }];
    const now = Date.now();
    const { modelId } = session.settings;
    const assistant = { id: messageId, role: 'assistant', content, createdAt: now, updatedAt: now, modelId, parentId: turn.turnId };
    wire.notify({ type: 'create_message', message: assistant }, sid);
    session.messages.push(assistant);
    session.tokenUsage = addUsage(session.tokenUsage);
    const total = session.tokenUsage;
    const lastCallTokenUsage = { ...TURN_USAGE, cacheReadTokens: 0 };
    wire.notify({ type: 'session_token_usage_changed', sessionId: sid, tokenUsage: total, inclusiveTokenUsage: total, lastCallTokenUsage });
    const tokenUsage = { ...zeroUsage(), ...TURN_USAGE };
    if (config.faults.has('unrelated-turn-id')) {
      wire.notify({ type: 'agent_turn_completed', reason: 'completed', turnId: `unrelated-${randomUUID()}`, tokenUsage }, sid);
      return 'abandoned';
    }
    const durationMs = Date.now() - started;
    const completion = { type: 'agent_turn_completed', reason: 'completed', turnId: turn.turnId, tokenUsage };
    wire.notify({ ...completion, cumulativeTokenUsage: total, durationMs }, sid);
    state('idle');
    state('idle'); // droid 0.225.2 usually reports idle twice
    return 'completed';
  } catch (error) {
    if (!signal.aborted) throw error;
    wire.notify({ type: 'agent_turn_completed', reason: 'cancelled', turnId: turn.turnId, tokenUsage: zeroUsage() }, sid);
    state('idle');
    return 'cancelled';
  }
}
