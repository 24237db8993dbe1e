/**
 * Lexical matching of shell commands against allow and deny prefixes. Nothing here runs a shell
 * or parses one fully: the splitter over-splits (a quoted `"a && b"` counts as two segments),
 * which only ever makes the allowlist stricter and the deny list broader. The deny list is a
 * guard rail against common spellings, not a sandbox.
 */

/**
 * Operators after which a new command starts: `&&`, `||`, `|` (not the `>|` redirect), `|&`, `;`,
 * newlines, a lone `&` (background, but not the `&` of `2>&1` or `&>`), subshells and
 * command/process substitution.
 */
export const COMMAND_SEPARATOR = /&&|\|\||(?<!>)\|&?|;|\r?\n|(?<![<>])&(?!>)|\$\(|<\(|>\(|`|\(|\)/;

/** Leading words that run the rest of the line as a command (with their `-flags`). */
const WRAPPERS = new Set([
  'sudo',
  'doas',
  'env',
  'command',
  'builtin',
  'exec',
  'nohup',
  'time',
  'nice',
  'xargs',
  '!',
  '{',
  'then',
  'do',
  'else',
  'elif',
  'if',
  'while',
  'until',
]);
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const REDIRECTION = /^\d*(?:>|<|&>)/;
const REDIRECTION_ALONE = /^\d*(?:>>?\|?|<<?<?|&>>?)$/;
const CHANGES_DIRECTORY = new Set(['cd', 'pushd', 'popd']);
// `>`, `>>` or `>|` not followed by `&` (so `2>&1` is a descriptor copy, not a file write).
const REDIRECT = />>?\|?(?!&)\s*([^\s<>|;&]*)/g;

/**
 * Trims and collapses runs of spaces and tabs to one space. Line breaks are kept (one per
 * non-blank line): they separate commands, so `a\nb` must never read as `a b`.
 */
export function normaliseCommand(command: string): string {
  return command
    .split(/\r?\n/)
    .map((line) => line.trim().replace(/[^\S\n]+/g, ' '))
    .filter((line) => line.length > 0)
    .join('\n');
}

/** The non-empty, normalised command segments of a chain, in order. */
export function splitCommandSegments(command: string): string[] {
  return command
    .split(COMMAND_SEPARATOR)
    .map(normaliseCommand)
    .filter((segment) => segment.length > 0);
}

/**
 * Word-boundary prefix match on normalised text: `npm test` matches `npm test` and
 * `npm test -- -t x`, never `npm testify`.
 */
export function matchesPrefix(text: string, prefix: string): boolean {
  const wanted = normaliseCommand(prefix);
  const subject = normaliseCommand(text);
  return wanted.length > 0 && (subject === wanted || subject.startsWith(`${wanted} `));
}

/** The first deny prefix the command matches (whole, or any segment in any spelling), if any. */
export function findDenyMatch(command: string, deny: readonly string[]): { segment: string; prefix: string } | undefined {
  const whole = normaliseCommand(command);
  const candidates = [whole, ...splitCommandSegments(command)];
  for (const segment of candidates) {
    for (const variant of spellings(segment)) {
      const prefix = deny.find((entry) => matchesPrefix(variant, entry));
      if (prefix !== undefined) return { segment, prefix };
    }
  }
  return undefined;
}

/**
 * The first segment that matches no allow prefix, or undefined when every segment matches.
 * Allow entries match the literal segment only: `CI=1 npm test` is not `npm test`.
 */
export function findUnallowedSegment(command: string, allow: readonly string[]): string | undefined {
  const segments = splitCommandSegments(command);
  if (segments.length === 0) return normaliseCommand(command);
  return segments.find((segment) => !allow.some((entry) => matchesPrefix(segment, entry)));
}

/**
 * Files the command writes through output redirections (`>`, `>>`, `>|`, `&>`), as written
 * (quotes removed; an empty string when the target is missing), and whether any segment
 * changes directory, which makes relative targets unresolvable.
 */
export function redirectTargets(command: string): { targets: string[]; changesDirectory: boolean } {
  const segments = splitCommandSegments(command);
  const targets: string[] = [];
  for (const segment of segments) {
    for (const match of segment.matchAll(REDIRECT)) targets.push((match[1] ?? '').replace(/["']/g, ''));
  }
  const changesDirectory = segments.some((segment) =>
    spellings(segment).some((variant) => CHANGES_DIRECTORY.has(variant.split(' ')[0] ?? '')),
  );
  return { targets, changesDirectory };
}

// Other spellings of one segment that run the same program: without quotes and backslashes,
// without leading `VAR=value` assignments, redirections or wrappers (`sudo`, `env`, …), with
// `/usr/bin/git` read as `git`. Checked against the deny list only.
function spellings(segment: string): string[] {
  const found = new Set([segment]);
  let current = normaliseCommand(segment.replace(/["'\\]/g, ''));
  for (let step = 0; step < 16 && current.length > 0; step += 1) {
    found.add(current);
    const next = stripLeadingWord(current);
    if (next === current) break;
    current = next;
  }
  return [...found];
}

// One step of `spellings`: drops an assignment, a redirection (with its target) or a wrapper
// (with its flags), or basenames a path.
function stripLeadingWord(text: string): string {
  const words = text.split(' ');
  const first = words[0] ?? '';
  if (ENV_ASSIGNMENT.test(first)) return words.slice(1).join(' ');
  // A redirection may come before the command (`2>&1 git push`, `> out git push`).
  if (REDIRECTION.test(first)) return words.slice(REDIRECTION_ALONE.test(first) ? 2 : 1).join(' ');
  if (WRAPPERS.has(first)) {
    let rest = 1;
    while (words[rest]?.startsWith('-')) rest += 1;
    return words.slice(rest).join(' ');
  }
  if (first.includes('/') && !first.endsWith('/')) {
    return [first.slice(first.lastIndexOf('/') + 1), ...words.slice(1)].join(' ');
  }
  return text;
}
