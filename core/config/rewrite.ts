import { readFile } from 'node:fs/promises';
import { isScalar, parseDocument, stringify, YAMLMap, type Document, type Scalar } from 'yaml';
import type { z } from 'zod';
import { OneWorksError } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { configInvalid, formatPath, syntaxIssues } from './issues.js';
import { maskSecrets } from './secrets.js';

/** A value `setYamlValue` can write. */
export type YamlScalarValue = string | number | boolean;

/**
 * Sets the scalar at `path` in a YAML file and writes it back atomically (temp, fsync, rename).
 * When the key exists as a scalar only that scalar's text changes, in its own quoting style:
 * comments, key order and formatting stay byte for byte. Missing maps are created (an empty
 * `key:` counts as missing); the file is then re-rendered by the yaml Document API, which keeps
 * comments and key order. A missing file is created. Throws OneWorksError('config_invalid') when
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
export function setYamlValueInText(text: string, path: ReadonlyArray<string | number>, value: YamlScalarValue, file = 'one-works.yaml'): string {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) throw configInvalid(file, syntaxIssues(doc.errors));
  const expected = doc.clone();
  fillEmptyMaps(expected, path);
  try {
    expected.setIn(path, value);
  } catch (error) {
    throw configInvalid(file, [{ path: formatPath(path), message: `cannot set this key: a key on its path holds a value that is not a mapping` }], error);
  }
  const node = doc.getIn(path, true);
  if (isScalar(node) && node.range) {
    for (const rendered of renderings(node, value)) {
      const candidate = text.slice(0, node.range[0]) + rendered + text.slice(node.range[1]);
      if (sameData(candidate, expected)) return candidate;
    }
  }
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
    if (isScalar(node) && node.value === null) doc.setIn(path.slice(0, depth), new YAMLMap());
  }
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
