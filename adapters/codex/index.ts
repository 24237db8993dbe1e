import { ADAPTER_CONTRACT_VERSION, type Adapter, type ProbeResult, type ResolvedCli } from '../../core/adapter.js';
import { resolveCli } from '../../core/install/resolve-cli.js';
import { codexCatalog } from './catalog.js';
import { type CodexConfig, CodexConfigSchema } from './config.js';
import { probeCodex } from './probe.js';
import { CodexSession } from './session.js';
import { CODEX_API, CODEX_PACKAGE, codexBinPath, codexPackageVersion, lookupCodexVersion, parseCodexVersion } from './versions.js';

const CREDENTIALS = ['OPENAI_API_KEY', 'CODEX_API_KEY'] as const;

// The one place the Codex adapter uses the generic CLI resolver (managed / system / path, range check).
async function resolveCodexCli(config: CodexConfig, ctx: Parameters<Adapter<CodexConfig>['prepare']>[1]): Promise<ResolvedCli> {
  const located = await resolveCli(
    config.cli,
    {
      adapter: 'codex',
      executable: process.platform === 'win32' ? 'codex.exe' : 'codex',
      platformPackage: () => {
        codexPackageVersion(config.cli.version);
        return CODEX_PACKAGE;
      },
      packageVersion: (version) => codexPackageVersion(version),
      binPath: codexBinPath(),
      parseVersion: parseCodexVersion,
    },
    {
      services: ctx.services,
      cacheDir: ctx.cacheDir,
      env: process.env,
      ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.install === undefined ? {} : { install: ctx.install }),
    },
  );
  const locked = ctx.lock.get(located.version);
  return {
    source: config.cli.source,
    binaryPath: located.binaryPath,
    version: located.version,
    range: config.cli.range,
    // Codex announces only its own version (in the app-server's user agent): that is its protocol fact.
    expected: lookupCodexVersion(located.version)
      ? { apiVersion: CODEX_API, protocolVersion: located.version, qualifiedBy: 'table' }
      : locked
        ? { apiVersion: locked.apiVersion, protocolVersion: locked.protocolVersion, qualifiedBy: 'lock' }
        : undefined,
    ...(located.package ? { package: located.package } : {}),
  };
}

/** The Codex adapter: `codex app-server` over JSON-RPC (stdio). */
export const codexAdapter: Adapter<CodexConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'codex',
  configSchema: CodexConfigSchema,
  apiVersion: CODEX_API,
  capabilities: {
    resume: 'respawn',
    perTurnSettings: true,
    steering: false,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  limitations: [
    {
      tools: ['commandExecution'],
      kind: 'read',
      defeats: ['deny', 'denyPaths'],
      reason:
        'Codex runs commands it considers read-only (ls, cat, grep, …) without asking under its "untrusted" approval policy, the strictest it has; they run inside its own workspace-write sandbox',
    },
  ],
  prepare: resolveCodexCli,
  open: (config, spec, io) => new CodexSession(config, spec, io),
  probe: (config, cli, launch, workdir): Promise<ProbeResult> => probeCodex(config, cli, launch, workdir),
  diagnose: (config) => [
    ...CREDENTIALS.map((name) =>
      config.credentials[name]
        ? { name: `codex ${name}`, ok: true, detail: 'present (not shown)' }
        : { name: `codex ${name}`, ok: true, warn: true, detail: 'not set' },
    ),
    config.endpoint
      ? { name: 'codex endpoint', ok: true, detail: `${config.endpoint.baseUrl} (Responses API; key not shown)` }
      : { name: 'codex endpoint', ok: true, detail: 'OpenAI default' },
    { name: 'codex command sandbox', ok: true, detail: config.commandSandbox },
  ],
  catalog: codexCatalog,
};

export { CodexConfigSchema } from './config.js';
export type { CodexConfig } from './config.js';
