/** The BYOK `customModels` entry that points droid at a scripted model server. */
export interface DroidCustomModelEntry {
  model: string;
  displayName: string;
  baseUrl: string;
  apiKey: string;
  provider: 'generic-chat-completion-api';
  maxOutputTokens: number;
}

/**
 * The model id droid derives for the default entry: `custom:<displayName>-<n>`, where `n` counts
 * earlier entries with the same name (droid-protocol.md §12.1). Valid while the settings hold
 * exactly one entry named "Scripted".
 */
export const SCRIPTED_MODEL_ID = 'custom:Scripted-0';

/**
 * Builds the `customModels` entry for a scripted model at `baseUrl` and the id droid will give it.
 * The id assumes no earlier entry has the same display name. `apiKey` is sent by droid as
 * `Authorization: Bearer <apiKey>`; default "sk-scripted".
 */
export function droidCustomModel(
  baseUrl: string,
  options: { displayName?: string; apiKey?: string } = {},
): { entry: DroidCustomModelEntry; modelId: string } {
  const displayName = options.displayName ?? 'Scripted';
  return {
    entry: {
      model: 'scripted',
      displayName,
      baseUrl,
      apiKey: options.apiKey ?? 'sk-scripted',
      provider: 'generic-chat-completion-api',
      maxOutputTokens: 1000,
    },
    modelId: `custom:${displayName.trim().replace(/\s+/g, '-')}-0`,
  };
}
