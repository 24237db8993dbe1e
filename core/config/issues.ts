import { isMap, isScalar, type Document, type LineCounter, type Node, type YAMLError } from 'yaml';
import { OneWorksError } from '../errors.js';

/** One problem in a config file, positioned when the file has a node for it. */
export interface ConfigIssue {
  /** 1-based line and column, when known. */
  line?: number;
  col?: number;
  /** Dotted key path, e.g. `adapters.droid.customModels[0].apiKey`; empty for the whole file. */
  path: string;
  message: string;
}

/** `adapters.droid.customModels[0].apiKey`; odd keys are quoted: `env["A.B"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$-]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** `file:line:col: path: message`, leaving out the parts that are unknown. */
export function formatIssue(file: string, issue: ConfigIssue): string {
  const where = issue.line === undefined ? file : `${file}:${issue.line}:${issue.col ?? 1}`;
  return issue.path ? `${where}: ${issue.path}: ${issue.message}` : `${where}: ${issue.message}`;
}

/** Most issues a config error message lists (all of them stay in its `data`). */
export const MAX_SHOWN_ISSUES = 50;

/**
 * The OneWorksError('config_invalid') for a list of issues: one line per issue, in file order,
 * no stack in the message. `data` carries the file and the positioned issues.
 */
export function configInvalid(file: string, issues: ConfigIssue[], cause?: unknown): OneWorksError {
  const ordered = [...issues].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.col ?? 0) - (b.col ?? 0));
  const shown = ordered.slice(0, MAX_SHOWN_ISSUES).map((issue) => formatIssue(file, issue));
  if (ordered.length > MAX_SHOWN_ISSUES) shown.push(`${file}: … and ${ordered.length - MAX_SHOWN_ISSUES} more problems`);
  return new OneWorksError('config_invalid', shown.join('\n'), {
    data: { file, issues: ordered },
    cause,
  });
}

/**
 * Where `path` is in the document: the node's start (or, with `key`, the start of that key inside
 * the map at `path`). When the path has no node (the key is missing), the nearest existing
 * ancestor is used; undefined when not even the root exists.
 */
export function positionOf(
  doc: Document,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
  key?: string,
): { line: number; col: number } | undefined {
  const keys = path.map((k) => (typeof k === 'symbol' ? String(k) : k));
  for (let depth = keys.length; depth >= 0; depth--) {
    const node = (depth === 0 ? doc.contents : doc.getIn(keys.slice(0, depth), true)) as Node | null | undefined;
    const target = depth === keys.length && key !== undefined ? (keyNode(node, key) ?? node) : node;
    if (target?.range) return lineCounter.linePos(target.range[0]);
  }
  return undefined;
}

// The key node of `key` in a map node, for pointing at an unknown key rather than its value.
function keyNode(node: Node | null | undefined, key: string): Node | undefined {
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    if (isScalar(pair.key) && String(pair.key.value) === key) return pair.key;
  }
  return undefined;
}

/** Issues for the YAML syntax errors of a parsed document (parsed with `prettyErrors`). */
export function syntaxIssues(errors: readonly YAMLError[]): ConfigIssue[] {
  return errors.map((error) => {
    const at = error.linePos?.[0];
    const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    return { ...(at ? { line: at.line, col: at.col } : {}), path: '', message: `YAML syntax error: ${reason}` };
  });
}
