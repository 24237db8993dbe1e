import { ADAPTER_CONTRACT_VERSION, type Adapter } from '../../core/adapter.js';
import { droidCatalog } from './catalog.js';
import { droidImporter } from './import/index.js';
import { DROID_CLI } from './cli-source.js';
import { DroidConfigSchema, type DroidConfig } from './config.js';
import { droidConfigNotes, droidEndpointNotes } from './diagnose.js';

// The credentials that may cross into droid (adapters.droid.credentials).
const DROID_CREDENTIALS = ['FACTORY_API_KEY', 'FACTORY_TOKEN'] as const;
import { DROID_LIMITATIONS } from './native-permissions.js';
import { probeDroid } from './probe.js';
import { skippedPlugins } from './session-params.js';
import { DroidSession } from './session.js';
import { checkDroidFacts } from './versions.js';

/** The droid adapter: Factory's `droid` CLI over its native stream-jsonrpc protocol. */
export const droidAdapter: Adapter<DroidConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'droid',
  configSchema: DroidConfigSchema,
  cli: DROID_CLI,
  checkVersionFacts: checkDroidFacts,
  // Steering is interrupt-and-resume by the orchestrator, not a message into the live turn.
  capabilities: {
    resume: 'load',
    perTurnSettings: false,
    steering: false,
    titles: true,
    authoritativeCatalog: true,
    oneTurnPerProcess: false,
  },
  prepare: (config, ctx) => ctx.services.resolveCli(config.cli, DROID_CLI, ctx),
  open: (config, spec, io) => new DroidSession(config, spec, io),
  probe: probeDroid,
  diagnoseOnline: droidEndpointNotes,
  diagnose: (config) => [
    ...droidConfigNotes(config),
    // Credentials: present or not, never their values.
    ...DROID_CREDENTIALS.map((name) =>
      config.credentials[name]
        ? { name: `droid ${name}`, ok: true, detail: 'present (not shown)' }
        : { name: `droid ${name}`, ok: true, warn: true, detail: 'not set (fine for BYOK-only use)' },
    ),
    ...skippedPlugins(config).map((plugin) => ({
      name: `droid plugin ${plugin}`,
      ok: true,
      warn: true,
      detail: 'skipped: droid plugins have no session-scoped injection, and One Works never installs into a real HOME',
    })),
  ],
  catalog: droidCatalog,
  importer: droidImporter,
  limitations: DROID_LIMITATIONS,
};

export { DroidConfigSchema } from './config.js';
export type { DroidConfig } from './config.js';
