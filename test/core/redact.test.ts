import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../core/redact.js';

const API_KEY = 'fk-canary-api-key-5e1d7c9b3a';
const TOKEN = 'ftok/canary+token=8c2f4e6a0b';
const BYOK = 'sk-rig-secret-7f3a9c21';

function redactor(...secrets: string[]): Redactor {
  const r = new Redactor();
  for (const s of secrets) r.register(s);
  return r;
}

function streamed(r: Redactor, text: string, pieces: number[]): string {
  const s = r.stream();
  let out = '';
  let at = 0;
  for (const size of pieces) {
    out += s.push(text.slice(at, at + size));
    at += size;
  }
  return out + s.push(text.slice(at)) + s.flush();
}

describe('Redactor', () => {
  it('redacts raw secrets and common encodings of them', () => {
    const r = redactor(API_KEY, TOKEN, BYOK);
    const samples = [
      `key=${API_KEY}`,
      `Authorization: Bearer ${BYOK}`,
      `url?token=${encodeURIComponent(TOKEN)}`,
      Buffer.from(API_KEY).toString('base64'),
      Buffer.from(TOKEN).toString('base64url'),
      ...['u', 'us', 'user', 'x-api-user'].map((user) => `Basic ${Buffer.from(`${user}:${BYOK}`).toString('base64')}`),
    ];
    for (const sample of samples) {
      const out = r.redact(sample);
      expect(out, sample).toContain(REDACTED);
      for (const secret of [API_KEY, TOKEN, BYOK]) {
        expect(out).not.toContain(secret);
        expect(out).not.toContain(encodeURIComponent(secret));
        expect(out).not.toContain(Buffer.from(secret).toString('base64'));
      }
    }
  });

  it('leaves text without secrets alone and refuses too-short values', () => {
    const r = redactor('abc', API_KEY);
    expect(r.redact('abc is fine here')).toBe('abc is fine here');
    expect(redactor().redact(API_KEY)).toBe(API_KEY);
  });

  it('redacts every string inside a JSON value', () => {
    const r = redactor(BYOK);
    expect(r.redactValue({ a: [`x ${BYOK}`, 3], b: { c: BYOK }, d: null })).toEqual({
      a: [`x ${REDACTED}`, 3],
      b: { c: REDACTED },
      d: null,
    });
  });

  it('catches a secret split across streamed chunks, whatever the split', () => {
    const r = redactor(API_KEY, TOKEN, BYOK);
    const text = `Echoing the key: ${API_KEY} and the token ${TOKEN}.`;
    // Regression: 5-character pieces once released "fk-…9b3" and held "a" (which also starts a
    // base64 form), so the complete secret was never seen whole.
    const fives = Array.from({ length: Math.ceil(text.length / 5) }, () => 5);
    expect(streamed(r, text, fives)).toBe(`Echoing the key: ${REDACTED} and the token ${REDACTED}.`);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 40 }), (pieces) => {
        const out = streamed(r, text, pieces);
        expect(out).not.toContain(API_KEY);
        expect(out).not.toContain(TOKEN);
        expect(out.replaceAll(REDACTED, '')).toBe('Echoing the key:  and the token .');
      }),
    );
  });

  it('releases ordinary text without waiting for a flush once it cannot start a secret', () => {
    const r = redactor(API_KEY);
    const s = r.stream();
    expect(s.push('hello there. ')).toBe('hello there. ');
    expect(s.push('fk-ca')).toBe('');
    expect(s.push('t')).toBe('fk-cat');
    expect(s.flush()).toBe('');
  });
});
