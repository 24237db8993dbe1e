import { describe, expect, it } from 'vitest';
import { Redactor } from '../../core/redact.js';

// `env | base64` wraps its output at 76 columns: a registered secret inside it must be redacted
// whatever its alignment in the encoded stream (three), wherever the line breaks fall, with LF
// or CRLF, raw or JSON-escaped (as events.jsonl holds it). Checked from the reader's side: the
// redacted text, unwrapped and decoded at every alignment, no longer holds the secret.

const SECRET = 'sk-wrapped-base64-secret-0f3e7a91c2';

function wrap(text: string, width: number, eol: string): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += width) lines.push(text.slice(i, i + width));
  return lines.join(eol);
}

// Everything the text decodes to, trying each of the four character offsets of a base64 quantum.
function decodings(text: string): string[] {
  const compact = text.replace(/\\r|\\n|\s/g, '');
  return [0, 1, 2, 3].map((offset) => Buffer.from(compact.slice(offset), 'base64').toString('latin1'));
}

describe('Redactor: base64 broken across lines', () => {
  const redactor = new Redactor();
  redactor.register(SECRET);

  for (const prefixLength of [0, 1, 2, 3, 4, 5, 40, 41, 42, 70, 71, 72]) {
    for (const eol of ['\n', '\r\n']) {
      it(`redacts a secret after ${prefixLength} bytes, wrapped with ${JSON.stringify(eol)}`, () => {
        const dump = `HOME=/root\n${'P'.repeat(prefixLength)}ONE_WORKS_BYOK_KEY_0=${SECRET}\nPATH=/usr/bin\n`;
        const wrapped = wrap(Buffer.from(dump).toString('base64'), 76, eol);
        // The case is real: before redaction, the secret decodes out of the wrapped text.
        expect(decodings(wrapped).some((d) => d.includes(SECRET))).toBe(true);
        for (const form of [wrapped, JSON.stringify(wrapped)]) {
          const redacted = redactor.redact(form);
          expect(redacted).toContain('[REDACTED]');
          for (const decoded of decodings(redacted)) expect(decoded).not.toContain(SECRET);
        }
      });
    }
  }

  it('redacts it at every wrap width and line-break position', () => {
    for (let width = 8; width <= 80; width += 1) {
      for (const shift of [0, 1, 2]) {
        const wrapped = wrap(Buffer.from(`${'x'.repeat(shift)}${SECRET}`).toString('base64'), width, '\n');
        for (const decoded of decodings(redactor.redact(wrapped))) expect(decoded, `width ${width} shift ${shift}`).not.toContain(SECRET);
      }
    }
  });

  it('leaves ordinary wrapped base64 and text alone', () => {
    const other = wrap(Buffer.from('nothing secret here, only a long enough text to wrap over lines').toString('base64'), 76, '\n');
    expect(redactor.redact(other)).toBe(other);
    expect(redactor.redact('line one\nline two')).toBe('line one\nline two');
  });
});

// The live view streams text in pieces: a wrapped base64 form split across pieces (at a line
// break or inside a line) must be held back until it is known, then released redacted.
describe('StreamRedactor: base64 broken across lines and across pieces', () => {
  const redactor = new Redactor();
  redactor.register(SECRET);

  for (const prefixLength of [0, 1, 2, 40, 71]) {
    for (const eol of ['\n', '\r\n']) {
      it(`releases no decodable secret whatever the piece size (prefix ${prefixLength}, ${JSON.stringify(eol)})`, () => {
        const dump = `HOME=/root\n${'P'.repeat(prefixLength)}ONE_WORKS_BYOK_KEY_0=${SECRET}\nPATH=/usr/bin\n`;
        const wrapped = wrap(Buffer.from(dump).toString('base64'), 76, eol);
        for (const size of [1, 3, 7, 13, 76, 77]) {
          const stream = redactor.stream();
          let out = '';
          for (let i = 0; i < wrapped.length; i += size) out += stream.push(wrapped.slice(i, i + size));
          out += stream.flush();
          expect(out).toContain('[REDACTED]');
          for (const decoded of decodings(out)) expect(decoded).not.toContain(SECRET);
        }
      });
    }
  }

  it('releases ordinary text at once and keeps every character', () => {
    const stream = redactor.stream();
    const text = 'no secret here\nline two\n';
    expect(stream.push(text) + stream.flush()).toBe(text);
  });
});
