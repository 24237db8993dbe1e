import { describe, expect, it } from 'vitest';
import { bearerMatches, checkRequest, corsHeaders, type GuardConfig } from '../../../cli/mcp/http-guard.js';

const TOKEN = 't'.repeat(40);
const config: GuardConfig = { port: 4321, token: TOKEN, allowOrigins: ['https://app.example'] };
const ok = { method: 'POST', url: '/mcp', headers: { host: '127.0.0.1:4321', authorization: `Bearer ${TOKEN}` } };
const check = (change: { method?: string; url?: string; headers?: Record<string, string | undefined> }) =>
  checkRequest({ method: change.method ?? ok.method, url: change.url ?? ok.url, headers: { ...ok.headers, ...change.headers } }, config);

describe('bearerMatches', () => {
  it("accepts exactly the token, whatever the scheme's case", () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
  });

  it('refuses wrong tokens of the same, shorter and longer length, empty and missing ones, and other schemes', () => {
    for (const header of [
      `Bearer ${'u'.repeat(40)}`,
      `Bearer ${TOKEN.slice(0, 39)}`,
      `Bearer ${TOKEN}x`,
      'Bearer ',
      'Bearer',
      '',
      undefined,
      `Basic ${TOKEN}`,
      TOKEN,
      `Bearer ${TOKEN} extra`,
    ]) {
      expect(bearerMatches(header, TOKEN)).toBe(false);
    }
  });
});

describe('checkRequest', () => {
  it('lets an authenticated POST /mcp with an allowed Host through', () => {
    expect(check({})).toBeUndefined();
    expect(check({ headers: { host: 'localhost:4321' } })).toBeUndefined();
    expect(check({ headers: { host: '[::1]:4321' } })).toBeUndefined();
    expect(check({ headers: { origin: 'http://localhost:4321' } })).toBeUndefined();
    expect(check({ headers: { origin: 'http://127.0.0.1:4321' } })).toBeUndefined();
    expect(check({ headers: { origin: 'https://app.example' } })).toBeUndefined();
  });

  it('refuses a missing or wrong bearer token with 401 and WWW-Authenticate', () => {
    for (const authorization of [undefined, 'Bearer short', `Bearer ${'x'.repeat(40)}`]) {
      expect(check({ headers: { authorization } })).toEqual({
        status: 401,
        body: { error: expect.any(String) },
        headers: { 'WWW-Authenticate': 'Bearer realm="one-works"' },
      });
    }
  });

  it('refuses other Hosts (DNS rebinding) and other Origins with 403, before looking at the token', () => {
    for (const host of ['evil.example:4321', '127.0.0.1:9999', '127.0.0.1', '0.0.0.0:4321', undefined]) {
      expect(check({ headers: { host, authorization: undefined } })).toMatchObject({ status: 403, body: { error: 'host not allowed' } });
    }
    for (const origin of ['http://evil.example', 'http://localhost:1', 'https://localhost:4321', 'null']) {
      expect(check({ headers: { origin } })).toMatchObject({ status: 403, body: { error: 'origin not allowed' } });
    }
  });

  it('answers other paths with 404 and other methods with 405 (stateless: no GET stream, no DELETE)', () => {
    expect(check({ url: '/other' })).toMatchObject({ status: 404 });
    expect(check({ url: '/mcp?x=1' })).toBeUndefined();
    for (const method of ['GET', 'DELETE', 'PUT'])
      expect(check({ method })).toEqual({ status: 405, body: { error: expect.any(String) }, headers: { Allow: 'POST' } });
  });
});

describe('CORS', () => {
  const preflight = (headers: Record<string, string | undefined>, url = '/mcp') =>
    checkRequest(
      { method: 'OPTIONS', url, headers: { host: '127.0.0.1:4321', 'access-control-request-method': 'POST', ...headers } },
      config,
    );

  it('answers a preflight from an approved Origin with 204 and the allowed method, headers and max-age, without a token', () => {
    for (const origin of ['https://app.example', 'http://localhost:4321']) {
      expect(preflight({ origin })).toEqual({
        status: 204,
        headers: {
          'Access-Control-Allow-Methods': 'POST',
          'Access-Control-Allow-Headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
          'Access-Control-Max-Age': expect.stringMatching(/^\d+$/),
        },
      });
    }
  });

  it('refuses a preflight from an unapproved Origin or to a foreign Host with 403, and one to another path with 404', () => {
    expect(preflight({ origin: 'https://evil.example' })).toMatchObject({ status: 403, body: { error: 'origin not allowed' } });
    expect(preflight({ origin: 'https://app.example', host: 'evil.example:4321' })).toMatchObject({
      status: 403,
      body: { error: 'host not allowed' },
    });
    expect(preflight({ origin: 'https://app.example' }, '/other')).toMatchObject({ status: 404 });
  });

  it('treats OPTIONS without an Origin as no preflight: token first, then 405', () => {
    expect(preflight({})).toMatchObject({ status: 401 });
    expect(preflight({ authorization: `Bearer ${TOKEN}` })).toMatchObject({ status: 405 });
  });

  it('names an approved Origin in Access-Control-Allow-Origin with Vary: Origin, and nothing for other requests', () => {
    expect(corsHeaders({ origin: 'https://app.example' }, config)).toEqual({
      'Access-Control-Allow-Origin': 'https://app.example',
      Vary: 'Origin',
    });
    expect(corsHeaders({}, config)).toEqual({});
    expect(corsHeaders({ origin: 'https://evil.example' }, config)).toEqual({});
  });
});
