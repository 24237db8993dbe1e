import { describe, expect, it } from 'vitest';
import { JSONRPC_ERROR_CODES, ProtocolError } from '../../../core/protocol/protocol-error.js';

describe('ProtocolError', () => {
  it('builds the JSON-RPC errors with their standard codes', () => {
    expect(ProtocolError.methodNotFound('droid.nope').toWireError()).toEqual({
      code: -32601,
      message: 'method not found: droid.nope',
      data: { method: 'droid.nope' },
    });
    expect(ProtocolError.invalidParams('cwd is required').toWireError()).toEqual({ code: -32602, message: 'cwd is required' });
    expect(ProtocolError.internalError().toWireError()).toEqual({ code: -32603, message: 'internal error' });
    expect(JSONRPC_ERROR_CODES.PARSE_ERROR).toBe(-32700);
  });

  it('is an Error whose wire form carries no stack', () => {
    const error = new ProtocolError(-32000, 'custom', { retry: false });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ProtocolError');
    expect(Object.keys(error.toWireError()).sort()).toEqual(['code', 'data', 'message']);
  });
});
