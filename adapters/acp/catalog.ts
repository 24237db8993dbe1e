import type { CatalogProvider } from '../../core/adapter.js';
import type { Catalog, CatalogModel } from '../../core/catalog/schema.js';
import type { GeminiConfig } from './config.js';

/**
 * Gemini CLI 0.61.0's model names (its `config/models.js`): the aliases `-m` accepts and the
 * models its own picker lists for an API key. The list is advisory: a BYOK endpoint may serve any
 * name, so an unlisted model is passed through with a note (the adapter declares its catalog not
 * authoritative), and the model the user configured comes first.
 */
export const GEMINI_MODELS = ['auto', 'pro', 'flash', 'flash-lite', 'gemini-2.5-pro', 'gemini-3.5-flash', 'gemini-3.1-flash-lite'] as const;

/** Gemini CLI 0.61.0's built-in tools, by One Works tool kind. */
const GEMINI_TOOLS: ReadonlyArray<[string, string]> = [
  ['run_shell_command', 'execute'],
  ['read_file', 'read'],
  ['read_many_files', 'read'],
  ['list_directory', 'read'],
  ['write_file', 'edit'],
  ['replace', 'edit'],
  ['glob', 'search'],
  ['grep_search', 'search'],
  ['web_fetch', 'fetch'],
  ['google_web_search', 'fetch'],
];

export const geminiCatalog: CatalogProvider<GeminiConfig> = {
  cacheFacts: (config, cli) => ({ version: cli.version, model: config.model }),
  list: async (config): Promise<Catalog> => {
    const entry = (id: string, custom: boolean): CatalogModel => ({
      id,
      displayName: id,
      custom,
      deprecated: false,
      disabled: false,
      efforts: [],
    });
    const configured =
      config.model !== 'inherit' && !(GEMINI_MODELS as readonly string[]).includes(config.model) ? [entry(config.model, true)] : [];
    return {
      models: [...configured, ...GEMINI_MODELS.map((id) => entry(id, false))],
      tools: GEMINI_TOOLS.map(([id, category]) => ({ id, displayName: id, category })),
    };
  },
};
