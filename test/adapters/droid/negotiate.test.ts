import { describe, expect, it } from 'vitest';
import { isOneWorksError, type OneWorksError } from '../../../core/errors.js';
import {
  checkNegotiation,
  parseInitializeResult,
  parseLoadResult,
  readAnnouncedVersions,
  type AnnouncedVersions,
} from '../../../adapters/droid/negotiate.js';

const EXPECTED = { apiVersion: '1.0.0', protocolVersion: '1.220.0' } as const;

function mismatch(announced: AnnouncedVersions): OneWorksError {
  try {
    checkNegotiation(announced, EXPECTED, '0.225.2');
  } catch (error) {
    if (isOneWorksError(error, 'protocol_mismatch')) return error;
    throw error;
  }
  throw new Error('checkNegotiation accepted a mismatch');
}

describe('readAnnouncedVersions', () => {
  it('reads both version fields of a droid frame', () => {
    const frame = { jsonrpc: '2.0', type: 'response', factoryApiVersion: '1.0.0', factoryProtocolVersion: '1.220.0', id: 'f1', result: {} };
    expect(readAnnouncedVersions(frame)).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.220.0' });
  });

  it('leaves absent fields absent and renders non-strings as text', () => {
    expect(readAnnouncedVersions({ factoryApiVersion: '1.0.0' })).toEqual({ apiVersion: '1.0.0' });
    expect(readAnnouncedVersions({ factoryApiVersion: 1, factoryProtocolVersion: null })).toEqual({
      apiVersion: '1',
      protocolVersion: 'null',
    });
    expect(readAnnouncedVersions('garbage')).toEqual({});
  });
});

describe('checkNegotiation', () => {
  it('accepts exactly the expected versions', () => {
    expect(() => checkNegotiation({ apiVersion: '1.0.0', protocolVersion: '1.220.0' }, EXPECTED, '0.225.2')).not.toThrow();
  });

  it('names a missing protocol version, the CLI version and the fix', () => {
    const error = mismatch({ apiVersion: '1.0.0' });
    expect(error.message).toContain('droid 0.225.2 announced no factoryProtocolVersion');
    expect(error.message).toContain('expects protocol 1.220.0');
    expect(error.message).toContain('one-works adapters upgrade droid 0.225.2');
    expect(error.data).toEqual({ cliVersion: '0.225.2', field: 'factoryProtocolVersion', announced: null, expected: '1.220.0' });
  });

  it('names a missing API version', () => {
    expect(mismatch({ protocolVersion: '1.220.0' }).message).toContain('announced no factoryApiVersion');
  });

  it('names a different protocol version: what was announced and what was expected', () => {
    const error = mismatch({ apiVersion: '1.0.0', protocolVersion: '1.206.0' });
    expect(error.message).toContain('speaks protocol 1.206.0');
    expect(error.message).toContain('expects protocol 1.220.0');
    expect(error.data).toMatchObject({ announced: '1.206.0', expected: '1.220.0' });
  });

  it('names a different API version', () => {
    expect(mismatch({ apiVersion: '2.0.0', protocolVersion: '1.220.0' }).message).toContain('speaks Factory API 2.0.0');
  });

  it.each(['latest', '1.220', '', '1'])('reports %j as a malformed (non-semver) version', (bad) => {
    const error = mismatch({ apiVersion: '1.0.0', protocolVersion: bad });
    expect(error.message).toContain(`malformed factoryProtocolVersion ${JSON.stringify(bad)}`);
  });
});

describe('parseInitializeResult / parseLoadResult', () => {
  it('accepts the results droid 0.225.2 sends', () => {
    const init = parseInitializeResult({
      sessionId: 's1',
      hostId: 'h',
      session: { messages: [] },
      settings: { modelId: 'm' },
      availableModels: [{ id: 'm' }],
    });
    expect(init.sessionId).toBe('s1');
    const load = parseLoadResult({
      session: { messages: [{ id: 'x', role: 'user', content: [] }], title: 't' },
      hasOlderMessages: false,
      isAgentLoopInProgress: false,
    });
    expect(load.session.messages).toHaveLength(1);
  });

  it('refuses an initialize result without sessionId as a protocol error naming the field', () => {
    let caught: unknown;
    try {
      parseInitializeResult({ session: { messages: [] } }, '0.225.2');
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'protocol_error')).toBe(true);
    const message = (caught as Error).message;
    expect(message).toContain('droid 0.225.2 answered initialize_session');
    expect(message).toContain('sessionId');
  });

  it('refuses a load result without session messages', () => {
    expect(() => parseLoadResult({ session: {} })).toThrow(/load_session.*session\.messages/);
    expect(() => parseLoadResult(null)).toThrow(/load_session/);
  });
});
