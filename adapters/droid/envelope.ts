import type { Envelope, Inbound, WireError } from '../../core/protocol/types.js';
import { describeZodError } from './notifications.js';
import { DROID_API_VERSION, DroidFrameSchema, type DroidOutboundFrame } from './wire.js';

export interface DroidEnvelopeOptions {
  /** The `factoryProtocolVersion` written on every outbound frame: the one the pinned CLI speaks. */
  protocolVersion: string;
}

/**
 * droid's envelope around JSON-RPC: every outbound frame carries `jsonrpc:"2.0"`, the `type`
 * discriminator (droid rejects frames without it), `factoryApiVersion:"1.0.0"` and
 * `factoryProtocolVersion`. `classify` maps what droid writes to `Inbound` and never throws: a
 * frame that fails the envelope schema is `invalid` with a reason naming the bad fields (never
 * their values). The version fields of inbound frames are not judged here; negotiate.ts does.
 */
export function createDroidEnvelope(options: DroidEnvelopeOptions): Envelope {
  const head = {
    jsonrpc: '2.0',
    factoryApiVersion: DROID_API_VERSION,
    factoryProtocolVersion: options.protocolVersion,
  } as const;

  return {
    request(id: string, method: string, params: unknown): DroidOutboundFrame {
      // droid validates `params` as an object for every method; `{}` is its "no params".
      return { ...head, type: 'request', id, method, params: params ?? {} };
    },
    notification(method: string, params: unknown): DroidOutboundFrame {
      return { ...head, type: 'notification', method, params: params ?? {} };
    },
    response(id: string, result: unknown): DroidOutboundFrame {
      return { ...head, type: 'response', id, result: result === undefined ? {} : result };
    },
    errorResponse(id: string, error: WireError): DroidOutboundFrame {
      const wire = error.data === undefined ? { code: error.code, message: error.message } : { ...error };
      return { ...head, type: 'response', id, error: wire };
    },
    classify: classifyDroidFrame,
  };
}

/** Maps one inbound frame to `Inbound`. Never throws. */
export function classifyDroidFrame(message: unknown): Inbound {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { kind: 'invalid', reason: 'frame is not a JSON object' };
  }
  // Notifications are nearly every frame of a turn: checked by hand with the rules of
  // DroidNotificationFrameSchema (frames with _meta, and anything else, go through the schema).
  const m = message as Record<string, unknown>;
  if (
    m.type === 'notification' &&
    m.jsonrpc === '2.0' &&
    typeof m.method === 'string' &&
    m._meta === undefined &&
    (m.factoryApiVersion === undefined || typeof m.factoryApiVersion === 'string') &&
    (m.factoryProtocolVersion === undefined || typeof m.factoryProtocolVersion === 'string')
  ) {
    return { kind: 'notification', method: m.method, params: m.params ?? {} };
  }
  const parsed = DroidFrameSchema.safeParse(message);
  if (!parsed.success) return { kind: 'invalid', reason: `not a droid frame: ${describeZodError(parsed.error)}` };
  const frame = parsed.data;
  switch (frame.type) {
    case 'request':
      return { kind: 'request', id: frame.id, method: frame.method, params: frame.params ?? {} };
    case 'notification':
      return { kind: 'notification', method: frame.method, params: frame.params ?? {} };
    case 'response': {
      if (frame.error) {
        const error: WireError = { code: frame.error.code, message: frame.error.message };
        if (frame.error.data !== undefined) error.data = frame.error.data;
        return { kind: 'error', id: frame.id, error };
      }
      if (frame.id === null) return { kind: 'invalid', reason: 'response has a null id and no error' };
      if (!Object.hasOwn(message, 'result')) return { kind: 'invalid', reason: `response ${frame.id} has neither result nor error` };
      return { kind: 'response', id: frame.id, result: frame.result };
    }
  }
}
