import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_SECRET_LENGTH } from '../redact.js';

// The value a config file's YAML gives (before `${VAR}` interpolation), kept from one command to
// the next: parsing a page of YAML with the yaml package costs a command that starts cold some 3 ms
// (its lexer, parser and composer run for the first time), about as much as the rest of reading
// its configuration. A command that finds its config file's text unchanged reads the value kept
// for it instead; anything else parses the text as before. Only the CLI's builds turn it on
// (cli/bin.cjs: the directory of their code caches), so the sources and the library never write one.
//
// One file per config path, replaced when the text changes: the text's length and a 53-bit hash
// of it say whether the value is that text's. A value is kept only when JSON gives it back
// exactly (plain strings, finite numbers, booleans, null, arrays and objects), and the file never
// holds a secret of the config: a string that contains one is kept as where it is in the text
// (offset and length; the text is read anyway, and is known to be the same), and a value with a
// secret in a key, or in a string the text does not hold as such (an escaped one), is not kept.
// A `${VAR}` reference is kept as written, never what it expands to.

/** Bumped when what a file holds changes meaning. */
const FORMAT = 2;

let directory: string | undefined;

/** Where values are kept from now on in this process (undefined: nowhere, the default). */
export function useConfigValueCache(dir: string | undefined): void {
  directory = dir;
}

/** The value kept for `text` of the config file at `path`, or undefined (none kept, or another text's). */
export function keptConfigValue(path: string, text: string): { value: unknown } | undefined {
  if (directory === undefined) return undefined;
  try {
    const kept = JSON.parse(readFileSync(fileFor(directory, path), 'utf8')) as Partial<KeptFile>;
    if (kept.format !== FORMAT || kept.length !== text.length || kept.hash !== hash53(text) || !('value' in kept)) return undefined;
    const top = { value: kept.value };
    for (const [at, offset, length] of kept.fromText ?? []) {
      const holder = at.slice(0, -1).reduce<unknown>((item, key) => (item as Record<string | number, unknown>)[key], top);
      (holder as Record<string | number, unknown>)[at.at(-1)!] = text.slice(offset, offset + length);
    }
    return top;
  } catch {
    return undefined;
  }
}

/** A kept value's file. */
interface KeptFile {
  format: number;
  /** The text's length and hash53. */
  length: number;
  hash: number;
  /** The value, each string that holds a secret replaced by null. */
  value: unknown;
  /** Where each of those strings is in the text: its path from the top (`value` first), offset and length. */
  fromText?: Array<[Array<string | number>, number, number]>;
}

/**
 * Keeps `value`, what the YAML of `text` gives before interpolation, for the next command that
 * reads the config file at `path`, unless JSON would not give it back exactly or a string of it
 * contains one of `secrets`. Failing to write changes nothing (no cache, or a read-only install).
 */
export function keepConfigValue(path: string, text: string, value: unknown, secrets: readonly string[]): void {
  if (directory === undefined || !isPlainJson(value)) return;
  const kept = withoutSecrets(value, text, secrets);
  if (!kept) return;
  const file = fileFor(directory, path);
  const temporary = `${file}.${process.pid}.tmp`;
  const content: KeptFile = { format: FORMAT, length: text.length, hash: hash53(text), ...kept };
  try {
    mkdirSync(directory, { recursive: true });
    writeFileSync(temporary, JSON.stringify(content), { mode: 0o600 });
    renameSync(temporary, file);
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing to remove, or nothing that can be.
    }
  }
}

// `value` with each string that contains a secret replaced by null and located in `text`
// (`fromText`), or undefined when a secret is in a key or in a string `text` does not hold as such.
function withoutSecrets(value: unknown, text: string, secrets: readonly string[]): Pick<KeptFile, 'value' | 'fromText'> | undefined {
  const needles = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH);
  const holds = (item: string): boolean => needles.some((secret) => item.includes(secret));
  const fromText: NonNullable<KeptFile['fromText']> = [];
  let keepable = true;
  const visit = (item: unknown, at: Array<string | number>): unknown => {
    if (typeof item === 'string') {
      if (!holds(item)) return item;
      const offset = text.indexOf(item);
      if (offset < 0) keepable = false;
      else fromText.push([at, offset, item.length]);
      return null;
    }
    if (Array.isArray(item)) return item.map((inner, index) => visit(inner, [...at, index]));
    if (item !== null && typeof item === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(item)) {
        if (holds(key)) keepable = false;
        copy[key] = visit(inner, [...at, key]);
      }
      return copy;
    }
    return item;
  };
  const stripped = visit(value, ['value']);
  if (!keepable) return undefined;
  return { value: stripped, ...(fromText.length > 0 ? { fromText } : {}) };
}

function fileFor(dir: string, path: string): string {
  return join(dir, `config-value-${hash53(path).toString(36)}.json`);
}

// True when JSON.stringify then JSON.parse give `value` back unchanged.
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.entries(value).every(([key, item]) => key !== '__proto__' && isPlainJson(item));
}

/** cyrb53: a 53-bit string hash (not a cryptographic one: the length is compared too). */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
