/** One frame read from droid's stdout, kept as parsed JSON (nothing is validated). */
export type RawFrame = Record<string, unknown>;

/** The API version droid enforces on every inbound frame (other values get -32700). */
export const RAW_FACTORY_API_VERSION = '1.0.0';

/** An error response from droid, or a client-side failure (`code` 0: timeout, exit, write). */
export class RawDroidError extends Error {
  override readonly name = 'RawDroidError';
  readonly code: number;
  readonly data: unknown;

  constructor(message: string, code = 0, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** A request frame with the droid envelope: `type`, `factoryApiVersion`, string `id`. */
export function rawRequest(id: string, method: string, params: unknown): RawFrame {
  return { jsonrpc: '2.0', type: 'request', factoryApiVersion: RAW_FACTORY_API_VERSION, id, method, params };
}

/** A response frame (result or error) to a droid → client request. */
export function rawResponse(id: string, outcome: { result: unknown } | { error: { code: number; message: string } }): RawFrame {
  return { jsonrpc: '2.0', type: 'response', factoryApiVersion: RAW_FACTORY_API_VERSION, id, ...outcome };
}

/** The `params.notification` object of a `droid.session_notification` frame, else undefined. */
export function notificationOf(frame: RawFrame): Record<string, unknown> | undefined {
  if (frame.type !== 'notification') return undefined;
  const params = frame.params as { notification?: unknown } | undefined;
  const notification = params?.notification;
  return typeof notification === 'object' && notification !== null ? (notification as Record<string, unknown>) : undefined;
}

/** True for a notification whose inner `type` is `type` (e.g. "agent_turn_completed"). */
export function isNotification(frame: RawFrame, type: string): boolean {
  return notificationOf(frame)?.type === type;
}

/** A predicate matching `agent_turn_completed` for one turn id. */
export function turnCompletedFor(turnId: string): (frame: RawFrame) => boolean {
  return (frame) => {
    const notification = notificationOf(frame);
    return notification?.type === 'agent_turn_completed' && notification.turnId === turnId;
  };
}
