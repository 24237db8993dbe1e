import { describe, expect, it } from 'vitest';
import { NdjsonCodec, type CodecResult } from '../../../core/transport/ndjson-codec.js';

// The codec decodes the complete lines of a chunk in one pass and reads them from that text; a
// line that spans chunks is assembled from byte pieces. Whatever the chunking, the results must
// be the same (but for where the copy of an oversized line is cut): this feeds one stream whole, byte by byte (every line assembled from pieces) and
// in seeded random pieces, and compares.

function drain(codec: NdjsonCodec): CodecResult[] {
  const results: CodecResult[] = [];
  for (let result = codec.next(); result !== undefined; result = codec.next()) results.push(result);
  return results;
}

// Feeds `bytes` cut at `cuts` (sorted offsets), reading after every chunk, then ends the input.
function feed(bytes: Buffer, cuts: number[], maxLineBytes: number): CodecResult[] {
  const codec = new NdjsonCodec({ maxLineBytes });
  const results: CodecResult[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > start) codec.append(bytes.subarray(start, cut));
    results.push(...drain(codec));
    start = Math.max(start, cut);
  }
  codec.end();
  results.push(...drain(codec));
  return results;
}

// A small deterministic generator (mulberry32), so a failure can be replayed.
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LINES = [
  '{"type":"notification","n":1}',
  '{"text":"ünïcødé — 日本語 🎉"}',
  '{"a":"x"}\r',
  '',
  '   ',
  '\r',
  'not json',
  '{"half":',
  `{"long":"${'y'.repeat(90)}"}`,
  `{"wide":"${'é'.repeat(40)}"}`,
  `{"emoji":"${'🎉'.repeat(30)}"}`,
  `${'z'.repeat(300)}`,
  '{"ok":true}',
];

function stream(rand: () => number, lines: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < lines; i++) {
    const line = LINES[Math.floor(rand() * LINES.length)]!;
    parts.push(Buffer.from(`${line}\n`, 'utf8'));
    // Now and then a byte that is not UTF-8 at all, inside a line.
    if (rand() < 0.05) parts.push(Buffer.from([0x7b, 0x22, 0xff, 0x80, 0x22, 0x7d, 0x0a]));
  }
  // An unterminated last line, completed by end().
  parts.push(Buffer.from('{"last":1}', 'utf8'));
  return Buffer.concat(parts);
}

// The copy of an oversized line in its report is cut where the line crossed the cap within the
// chunk that crossed it (as it always was), so it depends on the chunking: compared without it.
function comparable(results: CodecResult[]): unknown[] {
  return results.map((r) => (r.kind === 'invalid' && r.reason.includes('maxLineBytes') ? { kind: r.kind, reason: r.reason } : r));
}

describe('NdjsonCodec: chunking does not change the results', () => {
  // 100 bytes: some lines of the mix are over the cap, also by bytes while under it by characters.
  for (const maxLineBytes of [100, 2 ** 20]) {
    it(`gives the same results whole, byte by byte and in random pieces (maxLineBytes ${maxLineBytes})`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const rand = random(seed);
        const bytes = stream(rand, 60);
        const whole = feed(bytes, [], maxLineBytes);
        const byByte = feed(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
          maxLineBytes,
        );
        const cuts = Array.from({ length: 12 }, () => Math.floor(rand() * bytes.length)).sort((x, y) => x - y);
        const pieces = feed(bytes, cuts, maxLineBytes);
        expect(comparable(byByte)).toEqual(comparable(whole));
        expect(comparable(pieces)).toEqual(comparable(whole));
        // The mix does exercise every outcome.
        expect(whole.some((r) => r.kind === 'message')).toBe(true);
        expect(whole.some((r) => r.kind === 'invalid' && r.reason.startsWith('invalid JSON'))).toBe(true);
        if (maxLineBytes === 100) expect(whole.some((r) => r.kind === 'invalid' && r.reason.includes('maxLineBytes'))).toBe(true);
      }
    });
  }

  it('measures the cap in bytes for a line decoded with others from one chunk', () => {
    // 40 two-byte characters: 80 bytes of text, 40 characters; the line is 91 bytes.
    const wide = `{"wide":"${'é'.repeat(40)}"}`;
    const codec = new NdjsonCodec({ maxLineBytes: 90 });
    codec.append(`{"a":1}\n${wide}\n{"b":2}\n`);
    const results = drain(codec);
    expect(results.map((r) => r.kind)).toEqual(['message', 'invalid', 'message']);
    expect(results[1]).toMatchObject({ kind: 'invalid', line: wide });
    const roomy = new NdjsonCodec({ maxLineBytes: 91 });
    roomy.append(`{"a":1}\n${wide}\n{"b":2}\n`);
    expect(drain(roomy).map((r) => r.kind)).toEqual(['message', 'message', 'message']);
  });
});
