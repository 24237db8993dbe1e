/**
 * One Redactor per session. Every secret One Works injects is registered before the child
 * starts; every string that leaves the process boundary (events, logs, errors, stderr tails,
 * state, CLI output) passes through `redact`. Common encodings of each secret are registered
 * with it: URL-encoded, base64 of the secret itself, and base64 of `user:secret` pairs are
 * matched by their stable middle section. Base64 forms also match when wrapped across lines
 * (`base64` wraps at 76 columns; LF or CRLF, raw or JSON-escaped as `\n`), at any of the
 * three alignments the secret can have in the encoded stream. Not caught: other encodings
 * (hex dumps, reversed or interleaved text, compression, encryption).
 */
export const REDACTED = '[REDACTED]';

export const MIN_SECRET_LENGTH = 4;

// What may sit between two characters of a wrapped base64 form: one line break, raw or as it
// reads inside a JSON string.
const LINE_BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)?`;
// The characters a line break between two characters of a base64 form is made of (`\r\n`, `\n`, and
// their JSON-escaped forms, which start with a backslash).
const LINE_BREAK_CHARS = /[\r\n\\]/;
// The start of a line break, as the last characters of a piece of a stream.
const PARTIAL_LINE_BREAK = String.raw`(?:\r?\n?|\\(?:r(?:\\n?)?|n)?)`;

export class Redactor {
  #needles = new Set<string>();
  // The base64 forms among the needles: matched across line breaks too.
  #wrappable = new Set<string>();
  #pattern: RegExp | undefined;
  #prefixPatterns: RegExp[] | undefined;
  #sorted: string[] | undefined;
  #starts: NeedleStarts | undefined;

  /** Registers a secret (and its encodings). Values shorter than 4 characters are refused: they would redact ordinary text. */
  register(secret: string | undefined | null): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH) return;
    const { plain, base64 } = encodingsOf(secret);
    for (const form of [...plain, ...base64]) if (form.length >= MIN_SECRET_LENGTH) this.#needles.add(form);
    for (const form of base64) if (form.length >= MIN_SECRET_LENGTH) this.#wrappable.add(form);
    this.#pattern = undefined;
    this.#prefixPatterns = undefined;
    this.#sorted = undefined;
    this.#starts = undefined;
  }

  /** The registered raw and encoded forms, longest first. */
  get needles(): readonly string[] {
    // Sorted once per registration: streams ask for it at every chunk.
    this.#sorted ??= [...this.#needles].sort((a, b) => b.length - a.length);
    return this.#sorted;
  }

  /** True when at least one secret is registered. */
  get active(): boolean {
    return this.#needles.size > 0;
  }

  /** Replaces every registered secret (or encoding of one) in `text` with `[REDACTED]`. */
  redact(text: string): string {
    if (this.#needles.size === 0 || text.length === 0) return text;
    // Most strings hold no secret: one scan for a place where a form could start decides that
    // without running the pattern (its alternation of every form is the costly part).
    if (this.#candidates.firstIn(text, 0) === -1) return text;
    // Without a line break (raw, or JSON-escaped: no `\r`, `\n` nor backslash), a form can only
    // be there verbatim: a text holding none needs no pattern, whose first compile and run costs
    // a short command milliseconds (a warning that says "asks" starts like `sk-…`).
    if (!LINE_BREAK_CHARS.test(text) && !this.needles.some((needle) => text.includes(needle))) return text;
    this.#pattern ??= new RegExp(this.needles.map((needle) => this.#source(needle)).join('|'), 'g');
    return text.replace(this.#pattern, REDACTED);
  }

  /** Where registered forms can start: see {@link NeedleStarts}. */
  get #candidates(): NeedleStarts {
    this.#starts ??= new NeedleStarts(this.#needles, this.#wrappable);
    return this.#starts;
  }

  /**
   * The first index at or after `from` where a registered form (or, for base64 forms, a
   * line-broken form) could start; -1 when none can. A necessary condition only: the caller
   * still runs the real match from there.
   */
  firstCandidate(text: string, from: number): number {
    if (this.#needles.size === 0) return -1;
    return this.#candidates.firstIn(text, from);
  }

  /** The most characters a held-back prefix of a form (line breaks included) can span. */
  get longestHold(): number {
    return this.#needles.size === 0 ? 0 : this.#candidates.longestHold;
  }

  // A needle's regular expression: base64 forms may be broken across lines between any two characters.
  #source(needle: string): string {
    if (!this.#wrappable.has(needle)) return escapeRegExp(needle);
    return [...needle].map(escapeRegExp).join(LINE_BREAK);
  }

  /** Redacts every string inside a JSON-like value: a copy where something was redacted, the value itself where nothing was. */
  redactValue<T>(value: T): T {
    if (this.#needles.size === 0) return value;
    return walk(value, (s) => this.redact(s)) as T;
  }

  /**
   * For each base64 form: a pattern matching, at the end of a text, a proper prefix of it that may
   * be broken across lines (and may end in a line break), so a stream holds it back until it can
   * tell whether the form completes. Plain forms are held by `endsWith` alone.
   */
  get wrappedPrefixPatterns(): readonly RegExp[] {
    this.#prefixPatterns ??= [...this.#wrappable].map((needle) => wrappedPrefixPattern(needle));
    return this.#prefixPatterns;
  }

  /**
   * A streaming redactor for text that arrives in pieces (assistant deltas, stderr chunks):
   * it holds back the tail that could be the start of a secret until the next piece or `flush`.
   */
  stream(): StreamRedactor {
    return new StreamRedactor(this);
  }
}

/** Redacts a stream of chunks where a secret may be split across chunk boundaries. */
export class StreamRedactor {
  #pending = '';
  readonly #redactor: Redactor;

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  /** Feeds a chunk; returns the text that is now safe to release. */
  push(chunk: string): string {
    // Redact complete occurrences first, then hold back a tail that may still grow into a
    // secret. (Computing the hold on the raw text could release a complete secret cut short by
    // one character when its last character also starts another secret form.)
    const text = this.#redactor.redact(this.#pending + chunk);
    const hold = this.#holdLength(text);
    this.#pending = text.slice(text.length - hold);
    return text.slice(0, text.length - hold);
  }

  /** Releases whatever is held back. */
  flush(): string {
    const out = this.#redactor.redact(this.#pending);
    this.#pending = '';
    return out;
  }

  // Longest suffix of `text` that is a proper prefix of some secret form, so it may still grow
  // into one; for base64 forms, a prefix broken across lines counts too.
  #holdLength(text: string): number {
    // A held suffix starts where a form can start: with no such place in the tail, nothing is held.
    if (this.#redactor.firstCandidate(text, Math.max(0, text.length - this.#redactor.longestHold)) === -1) return 0;
    let hold = 0;
    for (const needle of this.#redactor.needles) {
      const max = Math.min(needle.length - 1, text.length);
      for (let n = max; n > hold; n--) {
        if (endsWithPrefix(text, needle, n)) {
          hold = n;
          break;
        }
      }
    }
    for (const pattern of this.#redactor.wrappedPrefixPatterns) {
      const match = pattern.exec(text);
      if (match && text.length - match.index > hold) hold = text.length - match.index;
    }
    return hold;
  }
}

// True when `text` ends with the first `n` characters of `needle` (compared in place: this runs
// for every streamed chunk, so no substring is built).
function endsWithPrefix(text: string, needle: string, n: number): boolean {
  if (text.charCodeAt(text.length - n) !== needle.charCodeAt(0)) return false;
  for (let i = 1, at = text.length - n + 1; i < n; i++, at++) {
    if (text.charCodeAt(at) !== needle.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The first two characters of every registered form, for a quick scan: a form matches at `i`
 * only if `text[i]` is its first character and `text[i + 1]` its second (or, for a base64 form,
 * the start of a line break: `\r`, `\n` or a backslash of an escaped one). At the end of the
 * text the first character alone makes a candidate (a held-back prefix may be that short).
 */
class NeedleStarts {
  /** Second characters allowed after each first character (by its char code). */
  readonly #next = new Map<number, string>();
  /** 1 for the ASCII codes that start a form: the scan's common case without a Map lookup. */
  readonly #asciiFirst = new Uint8Array(128);
  readonly longestHold: number;

  constructor(needles: ReadonlySet<string>, wrappable: ReadonlySet<string>) {
    let longest = 0;
    for (const needle of needles) {
      const first = needle.charCodeAt(0);
      const seconds = wrappable.has(needle) ? `${needle[1]}\r\n\\` : needle[1]!;
      this.#next.set(first, (this.#next.get(first) ?? '') + seconds);
      if (first < 128) this.#asciiFirst[first] = 1;
      // A proper prefix of n - 1 characters, a line break (4 characters at most, `\\r\\n`)
      // between each two of them, and a partial line break (4 at most) at the end.
      const span = wrappable.has(needle) ? needle.length - 1 + 4 * (needle.length - 2) + 4 : needle.length - 1;
      if (span > longest) longest = span;
    }
    this.longestHold = longest;
  }

  firstIn(text: string, from: number): number {
    const next = this.#next;
    const asciiFirst = this.#asciiFirst;
    const last = text.length - 1;
    for (let i = from; i <= last; i++) {
      const code = text.charCodeAt(i);
      if (code < 128 && asciiFirst[code] === 0) continue;
      const seconds = next.get(code);
      if (seconds === undefined) continue;
      if (i === last || seconds.includes(text[i + 1]!)) return i;
    }
    return -1;
  }
}

function encodingsOf(secret: string): { plain: string[]; base64: string[] } {
  const base64 = new Set<string>();
  base64.add(Buffer.from(secret).toString('base64').replace(/=+$/, ''));
  base64.add(Buffer.from(secret).toString('base64url').replace(/=+$/, ''));
  // base64 of "<anything>:<secret>" (Basic auth, or an `env` dump): the secret's bytes appear at
  // one of three alignments; the stable middle of each alignment identifies it.
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.from('x'.repeat(shift) + secret).toString('base64');
    const start = Math.ceil((shift * 4) / 3) + (shift === 0 ? 0 : 1);
    const end = Math.floor(((shift + secret.length) * 4) / 3) - 1;
    if (end - start >= 8) base64.add(encoded.slice(start, end));
  }
  return { plain: [secret, encodeURIComponent(secret)], base64: [...base64] };
}

// `c1(?:LB c2(?:LB c3 … )?)?` then the start of a line break, if any, anchored at the end: the
// leftmost match is the longest suffix that is a proper prefix of the wrapped needle.
function wrappedPrefixPattern(needle: string): RegExp {
  const chars = [...needle].slice(0, -1).map(escapeRegExp);
  let source = '';
  for (const char of chars.reverse()) source = source ? `${char}(?:${LINE_BREAK}${source})?` : char;
  return new RegExp(`${source}${PARTIAL_LINE_BREAK}$`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Copy-on-write: a value with nothing to redact is returned as it is (no copy per event).
function walk(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = walk(value[i], fn);
      if (v !== value[i]) out ??= value.slice();
      if (out) out[i] = v;
    }
    return out ?? value;
  }
  if (value && typeof value === 'object') {
    let out: Record<string, unknown> | undefined;
    // for-in over own keys (the keys Object.entries lists): no array or [key, value] pair allocated per object.
    const record = value as Record<string, unknown>;
    for (const k in record) {
      if (!Object.hasOwn(record, k)) continue;
      const v = record[k];
      const w = walk(v, fn);
      if (w !== v) out ??= { ...value };
      if (out) out[k] = w;
    }
    return out ?? value;
  }
  return value;
}
