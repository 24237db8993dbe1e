import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../core/redact.js';

// The redactor skips its pattern when a quick scan finds no place where a registered form could
// start, and a stream holds nothing back when no such place is in its tail. Both must give exactly
// what the full pattern and the full hold computation give: checked here against a reference
// written the plain way (one alternation over every form, each base64 form allowed a line break
// between any two characters; every prefix tried for the hold) on seeded random texts made of
// pieces of the forms, line breaks and ordinary words.

const SECRETS = ['sk-quick-scan-secret-7f3a9c21', 'tok/with+odd=chars?&'];

const LINE_BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)?`;
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function reference(redactor: Redactor): { redact: (text: string) => string; hold: (text: string) => number } {
  const plain = new Set(SECRETS.flatMap((secret) => [secret, encodeURIComponent(secret)]));
  const source = (needle: string): string => (plain.has(needle) ? escapeRegExp(needle) : [...needle].map(escapeRegExp).join(LINE_BREAK));
  const pattern = new RegExp(redactor.needles.map(source).join('|'), 'g');
  const redact = (text: string): string => text.replace(pattern, REDACTED);
  const hold = (text: string): number => {
    let longest = 0;
    for (const needle of redactor.needles) {
      for (let n = Math.min(needle.length - 1, text.length); n > longest; n--) {
        if (text.endsWith(needle.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    for (const prefix of redactor.wrappedPrefixPatterns) {
      const match = prefix.exec(text);
      if (match && text.length - match.index > longest) longest = text.length - match.index;
    }
    return longest;
  };
  return { redact, hold };
}

function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A text of random pieces: slices of registered forms (whole ones too), line breaks, words.
function text(rand: () => number, needles: readonly string[]): string {
  const breaks = ['\n', '\r\n', '\\n', '\\r\\n', '\r', '\\', '\\r'];
  const words = ['word ', 'read ', 'c', 's', 'r', ' ', 'ok', 'x2', '=='];
  let out = '';
  const pieces = 1 + Math.floor(rand() * 12);
  for (let i = 0; i < pieces; i++) {
    const pick = rand();
    if (pick < 0.45) {
      const needle = needles[Math.floor(rand() * needles.length)]!;
      const from = rand() < 0.5 ? 0 : Math.floor(rand() * needle.length);
      const to = rand() < 0.4 ? needle.length : from + Math.floor(rand() * (needle.length - from + 1));
      let piece = needle.slice(from, to);
      // Sometimes broken across lines, the way a wrapped base64 dump is.
      if (rand() < 0.3 && piece.length > 2) {
        const at = 1 + Math.floor(rand() * (piece.length - 1));
        piece = piece.slice(0, at) + breaks[Math.floor(rand() * 4)]! + piece.slice(at);
      }
      out += piece;
    } else if (pick < 0.6) {
      out += breaks[Math.floor(rand() * breaks.length)]!;
    } else {
      out += words[Math.floor(rand() * words.length)]!;
    }
  }
  return out;
}

describe('Redactor: the quick scan changes nothing', () => {
  const redactor = new Redactor();
  for (const secret of SECRETS) redactor.register(secret);
  const ref = reference(redactor);

  it('redacts exactly what the full pattern redacts', () => {
    let redacted = 0;
    // Texts without any line break character, where only a verbatim form can match (checked without the pattern).
    let unbroken = 0;
    let unbrokenRedacted = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const sample = text(random(seed), redactor.needles);
      const expected = ref.redact(sample);
      expect(redactor.redact(sample), JSON.stringify(sample)).toBe(expected);
      if (expected !== sample) redacted += 1;
      if (!/[\r\n\\]/.test(sample)) {
        unbroken += 1;
        if (expected !== sample) unbrokenRedacted += 1;
      }
    }
    // The samples do hold secrets (and also texts without any), with and without line breaks.
    expect(redacted).toBeGreaterThan(300);
    expect(redacted).toBeLessThan(3000);
    expect(unbrokenRedacted).toBeGreaterThan(50);
    expect(unbroken - unbrokenRedacted).toBeGreaterThan(50);
  });

  it('streams release and hold back exactly what the full hold computation does', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const rand = random(seed);
      const chunks = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => text(rand, redactor.needles));
      const stream = redactor.stream();
      let pending = '';
      for (const chunk of chunks) {
        const whole = ref.redact(pending + chunk);
        const held = ref.hold(whole);
        expect(stream.push(chunk), JSON.stringify(chunks)).toBe(whole.slice(0, whole.length - held));
        pending = whole.slice(whole.length - held);
      }
      expect(stream.flush()).toBe(ref.redact(pending));
    }
  });
});
