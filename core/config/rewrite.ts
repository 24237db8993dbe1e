import { readFile } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, parseDocument, stringify, type Document, type Scalar } from 'yaml';
import type { z } from 'zod';
import { OneWorksError } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { configInvalid, formatPath, syntaxIssues } from './issues.js';
import { maskSecrets } from './secrets.js';

/** A value `setYamlValue` can write. */
export type YamlScalarValue = string | number | boolean;

/**
 * Sets the scalar at `path` in a YAML file and writes it back atomically (temp, fsync, rename).
 * When the key exists as a scalar only that scalar's text changes, in its own quoting style;
 * when keys are missing they are appended as new lines to the deepest existing block map. Either
 * way every other byte (comments, key order, spacing) stays. Other cases (an empty `key:`, a flow
 * map on the path) are re-rendered by the yaml Document API, which keeps comments and key order
 * but may normalise spacing. Each edit is checked by re-parsing. A missing file is created. Throws OneWorksError('config_invalid') when
 * the file is not valid YAML or a key on the path holds a non-map value.
 */
export async function setYamlValue(filePath: string, path: ReadonlyArray<string | number>, value: YamlScalarValue): Promise<void> {
  const text = await readFile(filePath, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw new OneWorksError('config_not_found', `cannot read config file ${filePath}: ${error.code ?? String(error)}`, { cause: error });
  });
  const next = setYamlValueInText(text, path, value, filePath);
  if (next !== text) await writeFileAtomic(filePath, next);
}

/** The pure part of `setYamlValue`: returns the new text. `file` names the text in errors. */
export function setYamlValueInText(
  text: string,
  path: ReadonlyArray<string | number>,
  value: YamlScalarValue,
  file = 'one-works.yaml',
): string {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, lineCounter });
  if (doc.errors.length > 0) throw configInvalid(file, syntaxIssues(doc.errors));
  const expected = doc.clone();
  fillEmptyMaps(expected, path);
  try {
    expected.setIn(path, value);
  } catch (error) {
    throw configInvalid(
      file,
      [{ path: formatPath(path), message: `cannot set this key: a key on its path holds a value that is not a mapping` }],
      error,
    );
  }
  const node = doc.getIn(path, true);
  if (isScalar(node) && node.range) {
    for (const rendered of renderings(node, value)) {
      const candidate = text.slice(0, node.range[0]) + rendered + text.slice(node.range[1]);
      if (sameData(candidate, expected)) return candidate;
    }
  }
  const inserted = insertIntoBlockMap(text, doc, lineCounter, path, value);
  if (inserted !== undefined && sameData(inserted, expected)) return inserted;
  return expected.toString();
}

/**
 * YAML text of an effective configuration (defaults applied) with every secret masked as `***`,
 * for `one-works config check`.
 */
export function renderEffectiveConfig(schema: z.ZodType, config: unknown): string {
  return stringify(maskSecrets(schema, config), { lineWidth: 0 });
}

// An empty `key:` (null) on the way is replaced with a map so that the path can be created.
function fillEmptyMaps(doc: Document, path: ReadonlyArray<string | number>): void {
  for (let depth = 1; depth < path.length; depth++) {
    const node = doc.getIn(path.slice(0, depth), true);
    if (isScalar(node) && node.value === null) doc.setIn(path.slice(0, depth), doc.createNode({}));
  }
}

// Appends the missing keys as new lines at the end of the deepest existing block map, so the
// rest of the file keeps its bytes; undefined when that map is a flow map or the path has indexes.
function insertIntoBlockMap(
  text: string,
  doc: Document,
  lineCounter: LineCounter,
  path: ReadonlyArray<string | number>,
  value: YamlScalarValue,
): string | undefined {
  let depth = path.length - 1;
  while (depth > 0 && !isMap(doc.getIn(path.slice(0, depth), true))) depth--;
  const map = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
  const missing = path.slice(depth);
  if (!isMap(map) || map.flow || !map.range || missing.some((key) => typeof key !== 'string')) return undefined;
  const indent = ' '.repeat(lineCounter.linePos(map.range[0]).col - 1);
  const subtree = missing.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
  const lines = stringify(subtree, { lineWidth: 0 }).replace(/^(?=.)/gm, indent);
  const end = map.range[1];
  return `${text.slice(0, end)}${text[end - 1] === '\n' ? '' : '\n'}${lines}${text.slice(end)}`;
}

// The scalar's own style first, then double quotes (always valid for any string in block context).
function renderings(node: Scalar, value: YamlScalarValue): string[] {
  if (typeof value !== 'string') return [String(value)];
  const quoted = JSON.stringify(value);
  if (node.type === 'QUOTE_SINGLE' && !value.includes('\n')) return [`'${value.replaceAll("'", "''")}'`, quoted];
  if (node.type === 'PLAIN') return [value, quoted];
  return [quoted];
}

// True when `candidate` is valid YAML holding exactly the data of `expected`.
function sameData(candidate: string, expected: Document): boolean {
  const reparsed = parseDocument(candidate);
  return reparsed.errors.length === 0 && JSON.stringify(reparsed.toJS()) === JSON.stringify(expected.toJS());
}
