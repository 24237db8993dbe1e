import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyDroidFrame, createDroidEnvelope } from '../../../adapters/droid/envelope.js';
import { DroidOutboundFrameSchema } from '../../../adapters/droid/wire.js';

const envelope = createDroidEnvelope({ protocolVersion: '1.220.0' });
const head = { jsonrpc: '2.0', factoryApiVersion: '1.0.0', factoryProtocolVersion: '1.220.0' };

describe('droid envelope: outbound frames', () => {
  it('writes requests with type, both versions and the string id', () => {
    const frame = envelope.request('ow-1', 'droid.add_user_message', { text: 'hi' });
    expect(frame).toEqual({ ...head, type: 'request', id: 'ow-1', method: 'droid.add_user_message', params: { text: 'hi' } });
    expect(DroidOutboundFrameSchema.safeParse(frame).success).toBe(true);
  });

  it('sends {} as params when a method has none (droid validates params as an object)', () => {
    expect(envelope.request('ow-2', 'droid.interrupt_session', undefined)).toMatchObject({ params: {} });
    expect(envelope.notification('droid.x', undefined)).toEqual({ ...head, type: 'notification', method: 'droid.x', params: {} });
  });

  it('answers server requests with type:"response" echoing their id', () => {
    const ok = envelope.response('af6b3357', { selectedOption: 'proceed_once' });
    expect(ok).toEqual({ ...head, type: 'response', id: 'af6b3357', result: { selectedOption: 'proceed_once' } });
    const refused = envelope.errorResponse('af6b3357', { code: -32603, message: 'client refused' });
    expect(refused).toEqual({ ...head, type: 'response', id: 'af6b3357', error: { code: -32603, message: 'client refused' } });
    for (const frame of [ok, refused]) expect(DroidOutboundFrameSchema.safeParse(frame).success).toBe(true);
  });

  it('writes the protocol version it was created with', () => {
    const older = createDroidEnvelope({ protocolVersion: '1.206.0' });
    expect(older.request('a', 'droid.list_models', {})).toMatchObject({ factoryProtocolVersion: '1.206.0', factoryApiVersion: '1.0.0' });
  });
});

describe('droid envelope: classify', () => {
  it('classifies requests, notifications and responses', () => {
    expect(classifyDroidFrame({ ...head, type: 'request', id: 'u1', method: 'droid.ask_user', params: { q: 1 } })).toEqual({
      kind: 'request',
      id: 'u1',
      method: 'droid.ask_user',
      params: { q: 1 },
    });
    expect(
      classifyDroidFrame({
        ...head,
        type: 'notification',
        method: 'droid.session_notification',
        params: { a: 1 },
        _meta: { traceparent: 'x' },
      }),
    ).toEqual({
      kind: 'notification',
      method: 'droid.session_notification',
      params: { a: 1 },
    });
    expect(classifyDroidFrame({ ...head, type: 'response', id: 'f1', result: {} })).toEqual({ kind: 'response', id: 'f1', result: {} });
  });

  it('maps a response carrying an error to kind error, including droid null ids', () => {
    expect(classifyDroidFrame({ ...head, type: 'response', id: 'f8', error: { code: -32004, message: 'Session not found' } })).toEqual({
      kind: 'error',
      id: 'f8',
      error: { code: -32004, message: 'Session not found' },
    });
    expect(classifyDroidFrame({ ...head, type: 'response', id: null, error: { code: -32700, message: 'Invalid JSON', data: 1 } })).toEqual({
      kind: 'error',
      id: null,
      error: { code: -32700, message: 'Invalid JSON', data: 1 },
    });
  });

  it.each([
    ['a plain JSON-RPC frame without type', { jsonrpc: '2.0', id: 'a', method: 'droid.x' }, 'type'],
    ['a numeric id', { ...head, type: 'request', id: 7, method: 'droid.x' }, 'id'],
    ['a wrong jsonrpc version', { ...head, jsonrpc: '1.0', type: 'notification', method: 'droid.x' }, 'jsonrpc'],
    ['a response with neither result nor error', { ...head, type: 'response', id: 'f1' }, 'neither'],
    ['a response with null id and no error', { ...head, type: 'response', id: null, result: {} }, 'null id'],
  ])('rejects %s as invalid with a reason', (_name, frame, reasonPart) => {
    const inbound = classifyDroidFrame(frame);
    expect(inbound.kind).toBe('invalid');
    if (inbound.kind === 'invalid') expect(inbound.reason).toContain(reasonPart);
  });

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(typeof classifyDroidFrame(value).kind).toBe('string');
      }),
    );
    expect(classifyDroidFrame([1, 2]).kind).toBe('invalid');
    expect(envelope.classify(null).kind).toBe('invalid');
  });
});
