import type { z } from 'zod';
import { formatPath, type ConfigIssue } from './issues.js';
import { objectKeys, schemaAt, unwrapSchema } from './schema-walk.js';
import { maskUrlUserinfo, SECRET_MASK } from './secrets.js';

type ZodIssue = z.core.$ZodIssue;

/** Finds the line/column of a key path (with `key`: of that key inside the map at the path). */
export type Locate = (path: readonly PropertyKey[], key?: string) => { line: number; col: number } | undefined;

/**
 * Turns zod issues into config issues with messages a person can act on: what was expected and
 * what was found (`expected one of low|high, got "ultra"`), the closest known key for an unknown
 * one, and `***` instead of any value at a secret position. A string for which `hidden` is true
 * (it holds a value taken from the environment) is not shown either.
 */
export function describeZodIssues(
  issues: readonly ZodIssue[],
  schema: z.ZodType,
  input: unknown,
  locate: Locate,
  hidden: (value: string) => boolean = () => false,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = objectKeys(schemaAt(schema, issue.path) ?? schema) ?? [];
      for (const key of issue.keys) {
        out.push({ ...locate(issue.path, key), path: formatPath([...issue.path, key]), message: unknownKey(key, known) });
      }
      continue;
    }
    if (issue.code === 'invalid_key') {
      const parent = issue.path.slice(0, -1);
      const key = String(issue.path.at(-1));
      const reason = issue.issues[0]?.message ?? 'invalid key';
      out.push({ ...locate(parent, key), path: formatPath(issue.path), message: `invalid key ${JSON.stringify(key)}: ${reason}` });
      continue;
    }
    const secret = unwrapSchema(schemaAt(schema, issue.path) ?? schema).meta.secret === true;
    const value = valueAt(input, issue.path);
    const got =
      typeof value === 'string' && !secret && hidden(value) ? 'a value from the environment (not shown)' : describeValue(value, secret);
    out.push({ ...locate(issue.path), path: formatPath(issue.path), message: explain(issue, got) });
  }
  return out;
}

function explain(issue: ZodIssue, got: string): string {
  switch (issue.code) {
    case 'invalid_type':
      if (got === 'nothing') return `missing required key (expected ${typeName(issue.expected)})`;
      return `expected ${typeName(issue.expected)}, got ${got}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `expected ${String(issue.values[0])}, got ${got}`
        : `expected one of ${issue.values.map(String).join('|')}, got ${got}`;
    case 'too_small':
      return `expected ${bound(issue.origin, issue.minimum, issue.inclusive ? '>=' : '>', 'at least')}, got ${got}`;
    case 'too_big':
      return `expected ${bound(issue.origin, issue.maximum, issue.inclusive ? '<=' : '<', 'at most')}, got ${got}`;
    case 'invalid_format':
      if (issue.format === 'regex') return `${issue.message}, got ${got}`;
      return `expected a valid ${issue.format === 'url' ? 'URL' : issue.format}, got ${got}`;
    default:
      return issue.message;
  }
}

function bound(origin: string, limit: number | bigint, op: string, words: string): string {
  if (origin === 'number' || origin === 'int' || origin === 'bigint') return `a number ${op} ${limit}`;
  if (origin === 'string') return Number(limit) === 1 && op === '>=' ? 'a non-empty string' : `a string of ${words} ${limit} characters`;
  return `${words} ${limit} items`;
}

function typeName(expected: string): string {
  const names: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    string: 'a string',
    number: 'a number',
    int: 'an integer',
    boolean: 'true or false',
    record: 'a mapping',
  };
  return names[expected] ?? expected;
}

/** A short, safe rendering of a value found in the file. */
function describeValue(value: unknown, secret: boolean): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (secret) return SECRET_MASK;
  if (typeof value === 'string') {
    const shown = maskUrlUserinfo(value);
    return JSON.stringify(shown.length > 80 ? `${shown.slice(0, 77)}...` : shown);
  }
  return String(value);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function unknownKey(key: string, known: string[]): string {
  const close = closestKey(key, known);
  if (close) return `unknown key; did you mean "${close}"?`;
  return known.length > 0 ? `unknown key; expected one of ${known.join(', ')}` : 'unknown key';
}

/** The known key most similar to `key` (case-insensitive edit distance within about a third of its length). */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}
