import { describe, expect, it } from 'vitest';
import { OneWorksError } from '../../../core/errors.js';
import { MAX_REPORTED_LINE_CHARS, NdjsonCodec, serializeMessage, type CodecResult } from '../../../core/transport/ndjson-codec.js';

// Reads everything the codec has ready.
function drain(codec: NdjsonCodec): CodecResult[] {
  const results: CodecResult[] = [];
  for (let result = codec.next(); result !== undefined; result = codec.next()) results.push(result);
  return results;
}

describe('NdjsonCodec', () => {
  it('yields nothing before a newline arrives', () => {
    const codec = new NdjsonCodec();
    codec.append('{"a":1}');
    expect(codec.next()).toBeUndefined();
    codec.append('\n');
    expect(drain(codec)).toEqual([{ kind: 'message', value: { a: 1 } }]);
  });

  it('joins a message split across chunks', () => {
    const codec = new NdjsonCodec();
    codec.append('{"method":"dro');
    codec.append(Buffer.from('id.x","params":'));
    expect(codec.next()).toBeUndefined();
    codec.append('{}}\n');
    expect(drain(codec)).toEqual([{ kind: 'message', value: { method: 'droid.x', params: {} } }]);
  });

  it('yields several messages from one chunk, in order', () => {
    const codec = new NdjsonCodec();
    codec.append('{"n":1}\n{"n":2}\n{"n":3}\n{"n":');
    expect(drain(codec).map((r) => (r.kind === 'message' ? r.value : r))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    codec.append('4}\n');
    expect(drain(codec)).toEqual([{ kind: 'message', value: { n: 4 } }]);
  });

  it('accepts CRLF line endings, also with the CR and LF in different chunks', () => {
    const codec = new NdjsonCodec();
    codec.append('{"a":"x"}\r\n{"b":2}\r');
    codec.append('\n');
    expect(drain(codec)).toEqual([
      { kind: 'message', value: { a: 'x' } },
      { kind: 'message', value: { b: 2 } },
    ]);
  });

  it('ignores blank and whitespace-only lines', () => {
    const codec = new NdjsonCodec();
    codec.append('\n\r\n   \n{"a":1}\n\t\n');
    expect(drain(codec)).toEqual([{ kind: 'message', value: { a: 1 } }]);
  });

  it('reports bad JSON as invalid and stays usable for the next line', () => {
    const codec = new NdjsonCodec();
    codec.append('this is not json\n{"ok":true}\n');
    const [bad, good] = drain(codec);
    expect(bad).toMatchObject({ kind: 'invalid', line: 'this is not json' });
    expect(bad?.kind === 'invalid' && bad.reason).toMatch(/^invalid JSON/);
    expect(good).toEqual({ kind: 'message', value: { ok: true } });
  });

  it('truncates the copy of a long bad line', () => {
    const codec = new NdjsonCodec();
    codec.append(`${'x'.repeat(5000)}\n`);
    const [bad] = drain(codec);
    expect(bad?.kind).toBe('invalid');
    if (bad?.kind !== 'invalid') return;
    expect(bad.line.startsWith('xxxx')).toBe(true);
    expect(bad.line.length).toBeLessThanOrEqual(MAX_REPORTED_LINE_CHARS + 1);
  });

  it('skips an oversized line arriving in one chunk and parses the next one', () => {
    const codec = new NdjsonCodec({ maxLineBytes: 64 });
    codec.append(`{"big":"${'y'.repeat(100)}"}\n{"after":1}\n`);
    const results = drain(codec);
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('maxLineBytes (64 bytes)') });
    expect(results[0]?.kind === 'invalid' && results[0].line.startsWith('{"big":"yyy')).toBe(true);
    expect(results[1]).toEqual({ kind: 'message', value: { after: 1 } });
  });

  it('reports an oversized line as soon as it crosses the cap and discards the rest of it', () => {
    const codec = new NdjsonCodec({ maxLineBytes: 100 });
    codec.append('{"n":0}\n{"huge":"');
    for (let i = 0; i < 50; i += 1) codec.append('z'.repeat(1000));
    const early = drain(codec);
    expect(early[0]).toEqual({ kind: 'message', value: { n: 0 } });
    expect(early[1]).toMatchObject({ kind: 'invalid' });
    expect(early).toHaveLength(2);
    codec.append('zzz"}\n{"n":1}\n');
    expect(drain(codec)).toEqual([{ kind: 'message', value: { n: 1 } }]);
  });

  it('accepts a line of exactly maxLineBytes', () => {
    const line = JSON.stringify({ s: 'q'.repeat(20) });
    const codec = new NdjsonCodec({ maxLineBytes: Buffer.byteLength(line) });
    codec.append(`${line}\n`);
    expect(drain(codec)).toEqual([{ kind: 'message', value: { s: 'q'.repeat(20) } }]);
  });

  it('decodes multi-byte UTF-8 characters split across chunks', () => {
    const codec = new NdjsonCodec();
    const bytes = Buffer.from('{"text":"héllo – 日本 🙂"}\n', 'utf8');
    // Cut inside the 4-byte emoji and inside a 3-byte CJK character.
    const emoji = bytes.indexOf(Buffer.from('🙂')) + 2;
    const cjk = bytes.indexOf(Buffer.from('日')) + 1;
    codec.append(bytes.subarray(0, cjk));
    codec.append(bytes.subarray(cjk, emoji));
    codec.append(bytes.subarray(emoji));
    expect(drain(codec)).toEqual([{ kind: 'message', value: { text: 'héllo – 日本 🙂' } }]);
  });

  it('byte by byte delivery gives the same result', () => {
    const codec = new NdjsonCodec();
    const bytes = Buffer.from('{"a":"ü"}\n{"b":[1,2]}\r\n', 'utf8');
    for (const byte of bytes) codec.append(Buffer.from([byte]));
    expect(drain(codec)).toEqual([
      { kind: 'message', value: { a: 'ü' } },
      { kind: 'message', value: { b: [1, 2] } },
    ]);
  });

  it('treats an unterminated last line as complete after end()', () => {
    const codec = new NdjsonCodec();
    codec.append('{"a":1}\n{"last":true}');
    codec.end();
    expect(drain(codec)).toEqual([
      { kind: 'message', value: { a: 1 } },
      { kind: 'message', value: { last: true } },
    ]);
  });

  it('is reusable after clear()', () => {
    const codec = new NdjsonCodec();
    codec.append('{"dropped":1}\n{"partial":');
    codec.clear();
    expect(codec.next()).toBeUndefined();
    codec.append('{"kept":2}\n');
    expect(drain(codec)).toEqual([{ kind: 'message', value: { kept: 2 } }]);
  });

  it('rejects a non-positive maxLineBytes', () => {
    expect(() => new NdjsonCodec({ maxLineBytes: 0 })).toThrow(OneWorksError);
  });
});

describe('serializeMessage', () => {
  it('writes one JSON line that the codec reads back', () => {
    const value = { text: 'two\nlines', n: 1 };
    const line = serializeMessage(value);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    const codec = new NdjsonCodec();
    codec.append(line);
    expect(codec.next()).toEqual({ kind: 'message', value });
  });

  it('throws OneWorksError for values JSON cannot carry', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => serializeMessage(cyclic)).toThrow(OneWorksError);
    expect(() => serializeMessage(undefined)).toThrow(OneWorksError);
  });
});
