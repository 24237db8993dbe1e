import { ADAPTER_CONTRACT_VERSION, type Adapter, type ProbeResult } from '../../core/adapter.js';
import { codexCatalog } from './catalog.js';
import { type CodexConfig, CodexConfigSchema } from './config.js';
import { probeCodex } from './probe.js';
import { CodexSession } from './session.js';
import { CODEX_CLI, checkCodexFacts } from './versions.js';

const CREDENTIALS = ['OPENAI_API_KEY', 'CODEX_API_KEY'] as const;

/** The Codex adapter: `codex app-server` over JSON-RPC (stdio). */
export const codexAdapter: Adapter<CodexConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'codex',
  configSchema: CodexConfigSchema,
  cli: CODEX_CLI,
  checkVersionFacts: checkCodexFacts,
  capabilities: {
    resume: 'respawn',
    perTurnSettings: true,
    steering: true,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  // None: under "untrusted" 0.171.0 asks before every command, read-only ones (ls, cat, pwd, git
  // status) included, and before every apply_patch (policy-decides-every-call, codex row).
  limitations: [],
  prepare: (config, ctx) => ctx.services.resolveCli(config.cli, CODEX_CLI, ctx),
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
