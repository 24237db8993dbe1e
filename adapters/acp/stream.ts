import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { Transport } from '../../core/transport/transport.js';

/**
 * The `session/update` kinds the SDK (1.9.0, ACP v1 with its unstable additions) validates; the
 * SDK drops an update of any other kind, so such a notification is renamed to
 * UNKNOWN_UPDATE_METHOD, which the SDK hands to the client's `extNotification` in order with the
 * other updates.
 */
const KNOWN_UPDATES = new Set([
  'user_message_chunk',
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
  'available_commands_update',
  'current_mode_update',
  'config_option_update',
  'session_info_update',
  'usage_update',
]);

/** The method a `session/update` of an unknown kind arrives under at the client (see KNOWN_UPDATES). */
export const UNKNOWN_UPDATE_METHOD = '_one-works/unknown_session_update';

/**
 * The SDK's message stream over a One Works transport: the child's stdout lines (parsed by the
 * transport's NDJSON codec) become the readable side, writes go to the transport in order. The
 * readable side ends when the transport closes (the child's stdout reached EOF).
 */
export function transportStream(transport: Transport): Stream {
  let inbound: ReadableStreamDefaultController<AnyMessage> | undefined;
  let ended = false;
  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      inbound = controller;
    },
  });
  transport.onmessage = (message) => {
    if (ended) return;
    inbound?.enqueue((isUnknownUpdate(message) ? { ...message, method: UNKNOWN_UPDATE_METHOD } : message) as AnyMessage);
  };
  transport.onclose = () => {
    if (ended) return;
    ended = true;
    inbound?.close();
  };
  const writable = new WritableStream<AnyMessage>({
    write: (message) => transport.send(message),
    close: () => transport.close(),
  });
  return { readable, writable };
}

function isUnknownUpdate(message: unknown): message is Record<string, unknown> {
  const m = message as { method?: unknown; id?: unknown; params?: { update?: { sessionUpdate?: unknown } } } | null;
  if (m?.method !== 'session/update' || m.id !== undefined) return false;
  const update = m.params?.update;
  return typeof update === 'object' && update !== null && !KNOWN_UPDATES.has(update.sessionUpdate as string);
}
