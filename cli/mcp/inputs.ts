import { isAbsolute } from 'node:path';
import { z } from 'zod';
import type { ToolOrchestrator } from './tool.js';
import { LABEL_PATTERN, MAX_LABEL_LENGTH, MAX_LABELS, MAX_PROMPT_LENGTH, MAX_TITLE_LENGTH } from '../../core/orchestrator/index.js';
import { DEFAULT_ADAPTER } from '../../core/config/index.js';
import { AutonomySchema } from './schemas.js';

// Input pieces shared by several tools. Every tool input is a z.strictObject: an unknown
// argument is refused (usage) rather than ignored.

export const SessionIdInput = z.string().min(1).max(200).describe('a One Works session id (s-…), as create_session returned it');

export const RequestKeyInput = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe(
    'idempotency key: the same key with the same arguments returns the original handle (and its settings) without running anything again; the same key with different arguments fails with request_key_conflict',
  );

export const SettingsInput = {
  model: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("model id (see the models tool); default: the session's last turn, or the adapter default for a new session"),
  effort: z
    .string()
    .min(1)
    .max(50)
    .optional()
    .describe("reasoning effort the model supports (see the models tool); default: inherited, or the model's default"),
  autonomy: AutonomySchema.optional().describe(
    "off | low | medium | high; default: the session's last turn, or the adapter default for a new session",
  ),
};

export const PromptInput = z.string().min(1).max(MAX_PROMPT_LENGTH).describe('what to ask the agent');

export const WorkspaceInput = z
  .string()
  .min(1)
  .max(4096)
  .refine(isAbsolute, 'must be an absolute path')
  .describe('absolute path of the working directory; must be inside an approved root (list_workspaces)');

export const TitleInput = z.string().min(1).max(MAX_TITLE_LENGTH).describe('a short title for the session');

export const LabelsInput = z
  .array(z.string().min(1).max(MAX_LABEL_LENGTH).regex(LABEL_PATTERN))
  .max(MAX_LABELS)
  .describe('labels (One Works metadata; sent to the agent CLI as session tags at creation where it has tags)');

/** An adapter name; left out: the orchestrator's default (`defaults.adapter`, else droid). */
export const AdapterInput = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .describe("the agent adapter (default: the config's defaults.adapter, else droid)");

/** The adapter a tool call named, else the one the orchestrator's config makes the default. */
export async function adapterOrDefault(orchestrator: Pick<ToolOrchestrator, 'info'>, adapter: string | undefined): Promise<string> {
  if (adapter !== undefined) return adapter;
  return (await orchestrator.info()).defaultAdapter ?? DEFAULT_ADAPTER;
}
