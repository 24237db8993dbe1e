import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { OneWorksError } from '../../core/errors.js';
import type { EventDraft } from '../../core/events/index.js';
import type { RequestDescriptor } from '../../core/protocol/types.js';
import type { DroidConfig } from './config.js';
import { InitializeSession } from './methods.js';
import { InitializeSessionParamsSchema, type InitializeSessionResult } from './wire.js';

/**
 * The YAML keys that reach droid as native session parameters rather than through the isolated
 * settings: `systemPrompt` and `rules` (appended to droid's own prompt), `disableBuiltinSkills`,
 * and `plugins` (reported as skipped). Everything else lives in settings.ts.
 */

/** `initialize_session.systemPrompt` in its append form: droid's preset prompt plus `append`. */
export const DroidSystemPromptSchema = lazySchema(() =>
  z.strictObject({ type: z.literal('preset'), preset: z.literal('droid'), append: z.string() }),
);
export type DroidSystemPrompt = z.infer<typeof DroidSystemPromptSchema>;

const InitializeWithPromptParamsSchema = lazySchema(() =>
  InitializeSessionParamsSchema.unwrap().extend({ systemPrompt: DroidSystemPromptSchema.optional() }),
);
export type InitializeWithPromptParams = z.infer<typeof InitializeWithPromptParamsSchema>;

/**
 * `droid.initialize_session` with `systemPrompt`, which droid 0.225.2 accepts and persists with
 * the session (wire.ts's params schema does not list it yet). Same method and result schema.
 */
export const InitializeSessionWithPrompt: RequestDescriptor<InitializeWithPromptParams, InitializeSessionResult> = Object.freeze({
  method: InitializeSession.method,
  params: InitializeWithPromptParamsSchema,
  result: InitializeSession.result,
});

/**
 * One Works labels as `initialize_session.tags` (`[{name}]`, first occurrence of each label
 * kept, in order); `{}` when there are none, so that nothing is sent.
 */
export function nativeTags(labels: readonly string[] | undefined): { tags?: Array<{ name: string }> } {
  const names = [...new Set(labels ?? [])];
  return names.length > 0 ? { tags: names.map((name) => ({ name })) } : {};
}

/** Largest rules file read into the system prompt, in bytes. */
export const MAX_RULES_FILE_BYTES = 256 * 1024;

/** What `#handshake` adds to its requests, and what it reports, at one session start. */
export interface DroidSessionParams {
  /** Spread into `initialize_session`. */
  initialize: { systemPrompt?: DroidSystemPrompt; disableBuiltinSkills: boolean };
  /** Spread into `load_session` (which has no `systemPrompt`: droid keeps the session's own). */
  load: { disableBuiltinSkills: boolean };
  /** The text appended to droid's prompt (systemPrompt, then each rules file), if any. */
  promptAppend: string | undefined;
  /** Events to emit at start: one warning per skipped plugin. */
  notices: EventDraft[];
}

/** A rules file as read at session start. */
export interface RulesFile {
  path: string;
  content: string;
}

/**
 * Reads the rules files and composes the session parameters. Rejects with
 * OneWorksError('config_invalid') naming the path when a rules file is missing, unreadable, not
 * a file or larger than MAX_RULES_FILE_BYTES.
 */
export async function composeSessionParams(config: DroidConfig): Promise<DroidSessionParams> {
  const rules = await Promise.all(config.rules.map((path, index) => readRulesFile(path, index)));
  const append = systemPromptAppend(config.systemPrompt, rules);
  return {
    initialize: {
      ...(append !== undefined ? { systemPrompt: { type: 'preset', preset: 'droid', append } } : {}),
      disableBuiltinSkills: config.disableBuiltinSkills,
    },
    load: { disableBuiltinSkills: config.disableBuiltinSkills },
    promptAppend: append,
    notices: skippedPlugins(config).map((name) => ({
      type: 'log',
      key: `plugin-skipped:${name}:${randomUUID()}`,
      level: 'warn',
      message: `plugin ${name} skipped: no session-scoped injection`,
    })),
  };
}

/**
 * The text appended to droid's system prompt: `systemPrompt`, then each rules file under a line
 * naming it (`Instructions from <file name> (<path>):`), separated by blank lines. Undefined when
 * there is nothing to append.
 */
export function systemPromptAppend(systemPrompt: string | undefined, rules: readonly RulesFile[]): string | undefined {
  const sections = [
    ...(systemPrompt !== undefined ? [systemPrompt.trimEnd()] : []),
    ...rules.map((rule) => `Instructions from ${basename(rule.path)} (${rule.path}):\n${rule.content.trimEnd()}`),
  ];
  return sections.length > 0 ? sections.join('\n\n') : undefined;
}

/**
 * The `plugins` the YAML lists. droid installs plugins into the user's `~/.factory` only (no
 * session-scoped injection), so One Works installs none of them and reports each as skipped.
 */
export function skippedPlugins(config: Pick<DroidConfig, 'plugins'>): string[] {
  return [...config.plugins];
}

const LoadedPromptSchema = lazySchema(() =>
  z.looseObject({
    settings: z
      .looseObject({ systemPrompt: z.union([z.string(), z.looseObject({ append: z.string().optional() })]).optional() })
      .optional(),
  }),
);

/**
 * A warning when a resumed session's prompt differs from what the YAML composes now: droid
 * 0.225.2 keeps the prompt a session was created with (it ignores `systemPrompt` on
 * `load_session` and `update_session_settings`). `loaded` is the raw `load_session` result.
 */
export function resumedPromptNotice(params: DroidSessionParams, loaded: unknown): EventDraft | undefined {
  const parsed = LoadedPromptSchema.safeParse(loaded);
  const kept = parsed.success ? parsed.data.settings?.systemPrompt : undefined;
  const keptAppend = typeof kept === 'string' ? kept : kept?.append;
  if ((keptAppend ?? '') === (params.promptAppend ?? '')) return undefined;
  return {
    type: 'log',
    key: `prompt-kept:${randomUUID()}`,
    level: 'warn',
    message:
      'systemPrompt or rules changed since this droid session was created; droid keeps the prompt of its creation, start a new session to use the new one',
  };
}

async function readRulesFile(path: string, index: number): Promise<RulesFile> {
  const where = `rules file ${path} (adapters.droid.rules[${index}])`;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new OneWorksError('config_invalid', `${where} is not a file`, { data: { path } });
    if (info.size > MAX_RULES_FILE_BYTES) {
      throw new OneWorksError('config_invalid', `${where} is larger than ${MAX_RULES_FILE_BYTES} bytes`, { data: { path } });
    }
    return { path, content: await readFile(path, 'utf8') };
  } catch (error) {
    if (error instanceof OneWorksError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const problem = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`;
    throw new OneWorksError('config_invalid', `${where} ${problem}`, { data: { path }, cause: error });
  }
}
