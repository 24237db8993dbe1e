import type { CatalogProvider } from '../../core/adapter.js';
import type { Catalog, CatalogModel } from '../../core/catalog/schema.js';
import { CLAUDE_EFFORTS, CLAUDE_MODEL_ALIASES, type ClaudeConfig } from './config.js';
import { claudeToolKind } from './tools.js';

/** The built-in tools One Works maps to kinds (2.1.333). */
const TOOLS = ['Bash', 'Read', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'Grep', 'Glob', 'WebFetch', 'WebSearch'];

/**
 * An advisory catalog: Claude Code has no list call that a BYOK endpoint answers, so the list
 * is the model the user configured plus the CLI's aliases. The adapter declares its catalog not
 * authoritative, so an unlisted model is passed through with a note instead of refused.
 */
export const claudeCatalog: CatalogProvider<ClaudeConfig> = {
  cacheFacts: (config, cli) => ({ version: cli.version, model: config.model }),
  list: async (config): Promise<Catalog> => {
    const entry = (id: string, custom: boolean): CatalogModel => ({
      id,
      displayName: id,
      custom,
      deprecated: false,
      disabled: false,
      efforts: [...CLAUDE_EFFORTS],
    });
    const configured =
      config.model !== 'inherit' && !(CLAUDE_MODEL_ALIASES as readonly string[]).includes(config.model) ? [entry(config.model, true)] : [];
    return {
      models: [...configured, ...CLAUDE_MODEL_ALIASES.map((alias) => entry(alias, false))],
      tools: TOOLS.map((id) => ({ id, displayName: id, category: claudeToolKind(id) })),
    };
  },
};
