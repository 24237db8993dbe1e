import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { SessionRecord } from '../store/index.js';
import type { UpdateSessionRequest } from './types.js';

/** Longest prompt, in characters (every client: CLI, control socket, MCP). */
export const MAX_PROMPT_LENGTH = 200_000;

/**
 * Checks a prompt as createSession and sendMessage accept it. Throws OneWorksError `usage` for an
 * empty or whitespace-only prompt and for one over MAX_PROMPT_LENGTH characters.
 */
export function checkPrompt(prompt: string): void {
  if (prompt.trim() === '') {
    throw new OneWorksError(ERROR_CODES.USAGE, 'the prompt is empty; say what the agent should do');
  }
  if (prompt.length > MAX_PROMPT_LENGTH) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `a prompt is at most ${MAX_PROMPT_LENGTH} characters (this one has ${prompt.length}); put long material in a file in the workspace and point to it`,
      { data: { length: prompt.length } },
    );
  }
}

/** Longest title, in characters. */
export const MAX_TITLE_LENGTH = 200;
/** Most labels a session carries. */
export const MAX_LABELS = 32;
/** Longest label, in characters. */
export const MAX_LABEL_LENGTH = 64;
/** What a label may contain: letters, digits, `_`, `.`, `:`, `/`, `-`. */
export const LABEL_PATTERN = /^[\w.:/-]+$/;

/**
 * Checks a title and a label set as createSession and updateSession accept them; returns the
 * labels without duplicates (first occurrence kept). Throws OneWorksError `usage` naming the
 * offending value and the rule.
 */
export function checkMetadata(meta: { title?: string | undefined; labels?: readonly string[] | undefined }): { labels?: string[] } {
  if (meta.title !== undefined && meta.title.length > MAX_TITLE_LENGTH) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `a title is at most ${MAX_TITLE_LENGTH} characters (this one has ${meta.title.length}); shorten it`,
      {
        data: { length: meta.title.length },
      },
    );
  }
  if (meta.labels === undefined) return {};
  const labels = [...new Set(meta.labels)];
  if (labels.length > MAX_LABELS) {
    throw new OneWorksError(ERROR_CODES.USAGE, `a session has at most ${MAX_LABELS} labels (${labels.length} given); drop some`, {
      data: { count: labels.length },
    });
  }
  for (const label of labels) {
    if (label.length === 0 || label.length > MAX_LABEL_LENGTH || !LABEL_PATTERN.test(label)) {
      throw new OneWorksError(
        ERROR_CODES.USAGE,
        `invalid label ${JSON.stringify(label.slice(0, MAX_LABEL_LENGTH + 1))}: a label is 1 to ${MAX_LABEL_LENGTH} characters of letters, digits, '_', '.', ':', '/' or '-' (e.g. "team:infra")`,
        { data: { label: label.slice(0, MAX_LABEL_LENGTH + 1) } },
      );
    }
  }
  return { labels };
}

/**
 * The record with an update applied: absent fields stay; an empty title removes the title,
 * empty labels remove the labels, `archived: false` removes the flag. Validates like {@link checkMetadata}.
 */
export function applyMetadata(record: SessionRecord, update: Omit<UpdateSessionRequest, 'sessionId'>): SessionRecord {
  const { labels } = checkMetadata(update);
  const next: SessionRecord = { ...record };
  if (update.title !== undefined) {
    if (update.title === '') delete next.title;
    else next.title = update.title;
  }
  if (labels !== undefined) {
    if (labels.length === 0) delete next.labels;
    else next.labels = labels;
  }
  if (update.archived !== undefined) {
    if (update.archived) next.archived = true;
    else delete next.archived;
  }
  return next;
}
