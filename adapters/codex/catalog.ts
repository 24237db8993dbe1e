import type { CatalogProvider } from '../../core/adapter.js';
import type { Catalog, CatalogModel } from '../../core/catalog/schema.js';
import { withThrowawayAppServer } from './app-server-client.js';
import { CODEX_EFFORTS, type CodexConfig } from './config.js';
import { codexToolKind } from './tools.js';
import { CODEX_REQUESTS } from './wire.js';

/** The tool spans Codex reports, by thread item type (0.171.0). */
const TOOLS = ['commandExecution', 'fileChange', 'webSearch', 'imageView', 'mcpToolCall', 'dynamicToolCall'];

/**
 * Models from the app-server's own listing (`model/list`, hidden ones included), plus the
 * configured model when it is not among them (a BYOK endpoint's model: Codex lists its built-in
 * catalog, not the endpoint's). Advisory: the adapter declares its catalog not authoritative, so
 * an unlisted model is passed through with a note instead of refused.
 */
export const codexCatalog: CatalogProvider<CodexConfig> = {
  cacheFacts: (config, cli) => ({ version: cli.version, model: config.model, endpoint: config.endpoint?.baseUrl ?? null }),
  list: (config, cli, launch, workdir): Promise<Catalog> =>
    withThrowawayAppServer(config, cli, launch, workdir, 'model listing', async (conn) => {
      const listed: CatalogModel[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page += 1) {
        const result = await conn.request(CODEX_REQUESTS.modelList, { includeHidden: true, ...(cursor ? { cursor } : {}) });
        for (const model of result.data) {
          listed.push({
            id: model.model,
            displayName: model.displayName,
            custom: false,
            deprecated: false,
            disabled: model.hidden,
            efforts: model.supportedReasoningEfforts.map((effort) => effort.reasoningEffort),
          });
        }
        if (!result.nextCursor) break;
        cursor = result.nextCursor;
      }
      const configured =
        config.model !== 'inherit' && !listed.some((model) => model.id === config.model)
          ? [{ id: config.model, displayName: config.model, custom: true, deprecated: false, disabled: false, efforts: [...CODEX_EFFORTS] }]
          : [];
      return {
        models: [...configured, ...listed],
        tools: TOOLS.map((id) => ({ id, displayName: id, category: codexToolKind(id) })),
      };
    }),
};
