import type { CatalogProvider, ResolvedCli, ThrowawayLauncher } from '../../core/adapter.js';
import type { Catalog, CatalogModel, CatalogRequest, CatalogTool } from '../../core/catalog/schema.js';
import { OneWorksError } from '../../core/errors.js';
import { createConnection } from '../../core/protocol/index.js';
import { customModelId, type DroidConfig } from './config.js';
import { isTransportFailure } from './degrade.js';
import { createDroidEnvelope } from './envelope.js';
import { InitializeSession, ListModels, ListTools } from './methods.js';
import { configuredCredentials, describeDroidLaunch } from './launch.js';
import { composeDroidSettings } from './settings.js';
import { DEFAULT_PROTOCOL_FOR_PROBE } from './versions.js';
import type { DroidModel, ListToolsResult } from './wire.js';

/**
 * Lists droid's models and tools: starts droid in stream-jsonrpc mode through `launch` (a
 * throwaway HOME seeded with the config's settings, so BYOK `customModels` are listed too),
 * initializes a session without any prompt, calls `droid.list_models {includeDisabled: true}`
 * and `droid.list_tools` for `request.modelId` (default: the configured model, or droid's own
 * default with `inherit`) at the configured autonomy level, and stops the child. Tools of a model absent from the list are not
 * asked for (`tools: []`): callers validate the model against `models`.
 * Throws OneWorksError `probe_failed` (with droid's stderr tail) when droid fails.
 */
export async function listDroidCatalog(
  config: DroidConfig,
  cli: ResolvedCli,
  launch: ThrowawayLauncher,
  workdir: string,
  request: CatalogRequest = {},
): Promise<Catalog> {
  // Throwaway scope: no hooks, MCP servers or skills act during a listing. Credentials are
  // passed: which models droid lists as disabled depends on them.
  const settings = composeDroidSettings(config, { scope: 'throwaway' });
  const child = await launch(describeDroidLaunch(config, cli, { cwd: workdir, settings }), settings.files);
  const conn = createConnection(
    child.transport,
    createDroidEnvelope({ protocolVersion: cli.expected?.facts.protocolVersion ?? DEFAULT_PROTOCOL_FOR_PROBE }),
    { defaultTimeoutMs: config.requestTimeoutMs, idPrefix: 'catalog-' },
  );
  try {
    await conn.start();
    await conn.request(
      InitializeSession,
      { machineId: 'one-works-catalog', cwd: workdir, autonomyLevel: config.autonomy },
      { timeoutMs: config.startupTimeoutMs },
    );
    const models = (await conn.request(ListModels, { includeDisabled: true })).models.map(toCatalogModel);
    const toolsModel = request.modelId ?? (config.model === 'inherit' ? undefined : config.model);
    const known = toolsModel === undefined || models.some((m) => m.id === toolsModel);
    // droid 0.225.2: `currentlyAllowed` depends on the autonomy level (at `off`, Edit and Create are not allowed).
    const params = { autonomyLevel: config.autonomy, ...(toolsModel === undefined ? {} : { modelId: toolsModel }) };
    const tools = known ? (await conn.request(ListTools, params)).tools.map(toCatalogTool) : [];
    return { models, tools };
  } catch (error) {
    const tail = child.stderrTail().trim();
    throw new OneWorksError(
      'probe_failed',
      `listing models and tools of droid ${cli.version} at ${cli.binaryPath} failed: ${error instanceof Error ? error.message : String(error)}${tail ? `; stderr: ${tail.slice(-300)}` : ''}`,
      { cause: error },
    );
  } finally {
    conn.close();
    await child.stop('shutdown');
  }
}

/**
 * What decides droid's catalog, without secrets: the CLI version, the BYOK model ids (from
 * `customModels`; ids only, never keys or URLs), which credentials are set (names only: they
 * change which models are enabled), the model whose tools are listed and the autonomy level
 * (it decides which tools are allowed). A model or setting
 * added through `configContent` is not tracked: `--refresh` picks it up.
 */
export function droidCatalogFacts(config: DroidConfig, cli: ResolvedCli, request: CatalogRequest): Record<string, unknown> {
  return {
    cliVersion: cli.version,
    customModelIds: config.customModels.map((_, index) => customModelId(config.customModels, index)),
    credentials: Object.keys(configuredCredentials(config)).sort(),
    toolsModel: request.modelId ?? (config.model === 'inherit' ? null : config.model),
    autonomy: config.autonomy,
  };
}

/**
 * With `fallback: oneshot`, a listing that failed because droid could not start (it exited,
 * closed its output or did not answer: the failures after which a session falls to one-shot
 * mode, degrade.ts) does not refuse the turn: the model check uses the last known catalog, or
 * none. A spawn failure, a refused request or a malformed answer still refuses it.
 */
export function droidCatalogUnreachable(config: DroidConfig, error: OneWorksError): string | undefined {
  if (config.fallback !== 'oneshot') return undefined;
  // The listing wraps droid's failure as `probe_failed` (its cause; loadCatalog may wrap once more to redact).
  for (let cause: unknown = error, depth = 0; cause instanceof OneWorksError && depth < 4; cause = cause.cause, depth += 1) {
    if (isTransportFailure(cause)) return 'its turns run in one-shot mode while it cannot start (adapters.droid.fallback: oneshot)';
    if (cause.code !== 'probe_failed') return undefined;
  }
  return undefined;
}

/** droid's catalog provider (wired as `droidAdapter.catalog`). */
export const droidCatalog: CatalogProvider<DroidConfig> = {
  cacheFacts: droidCatalogFacts,
  list: listDroidCatalog,
  unreachable: droidCatalogUnreachable,
};

/** One `list_models` entry as a catalog model. droid 0.225.x marks BYOK entries `isCustom` with ids `custom:…`. */
export function toCatalogModel(model: DroidModel): CatalogModel {
  return {
    id: model.id,
    displayName: model.displayName ?? model.shortDisplayName ?? model.id,
    ...(model.modelProvider ? { provider: model.modelProvider } : {}),
    custom: model.isCustom ?? model.id.startsWith('custom:'),
    deprecated: model.deprecated ?? false,
    disabled: model.disabled ?? false,
    ...(model.disabledReason ? { disabledReason: model.disabledReason } : {}),
    efforts: model.supportedReasoningEfforts ?? [],
    ...(model.defaultReasoningEffort ? { defaultEffort: model.defaultReasoningEffort } : {}),
  };
}

/**
 * One `list_tools` entry as a catalog tool: `id` is droid's `llmId` (the name the model calls,
 * e.g. `Execute`, which tool events carry), `nativeId` droid's own id (`execute-cli`), and
 * `allowed` its `currentlyAllowed` (whether droid lets the agent use the tool at the session's
 * autonomy level).
 */
export function toCatalogTool(tool: ListToolsResult['tools'][number]): CatalogTool {
  const id = tool.llmId ?? tool.id;
  return {
    id,
    displayName: tool.displayName ?? id,
    ...(id !== tool.id ? { nativeId: tool.id } : {}),
    ...(tool.category ? { category: tool.category } : {}),
    ...(tool.currentlyAllowed === undefined ? {} : { allowed: tool.currentlyAllowed }),
  };
}
