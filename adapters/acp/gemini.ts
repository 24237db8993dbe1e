import path from 'node:path';
import semver from 'semver';
import { z } from 'zod';
import {
  ADAPTER_CONTRACT_VERSION,
  type Adapter,
  type LaunchSpec,
  type ProbeResult,
  type SeedFile,
  type SessionSpec,
} from '../../core/adapter.js';
import { resolveCli } from '../../core/install/resolve-cli.js';
import { probeAcp } from './probe.js';
import { ACP_API, type AcpAgentProfile, AcpSession, acpProtocolVersion } from './session.js';

/**
 * Gemini CLI (`@google/gemini-cli`) as an ACP agent: `gemini --acp`. The package is a JavaScript
 * bundle with no runtime dependencies; One Works installs it (managed) and runs the bundle with
 * the Node that runs One Works itself, never a `node` found on PATH.
 */

/** The Gemini CLI version One Works pins by default (qualified by test/conformance/gemini.test.ts). */
export const GEMINI_DEFAULT_PIN = '0.61.0';
export const GEMINI_PACKAGE = '@google/gemini-cli';
/** The bundle inside the package. */
export const GEMINI_BUNDLE = 'bundle/gemini.js';
/** The auth method for an API key (and a BYOK endpoint), called with ACP `authenticate`. */
export const GEMINI_API_KEY_AUTH = 'gemini-api-key';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const secret = (description: string) => z.string().min(1).meta({ secret: true, description });

function minorRange(pin: string): string {
  const parsed = semver.parse(pin);
  return parsed ? `>=${parsed.major}.${parsed.minor}.0 <${parsed.major}.${parsed.minor + 1}.0` : pin;
}

export const GeminiConfigSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Use this adapter; a disabled adapter is never probed, installed or reported.'),
  cli: z
    .strictObject({
      source: z
        .enum(['managed', 'system', 'path'])
        .default('managed')
        .describe('managed: installed by One Works; system: gemini on PATH; path: cli.path.'),
      version: z
        .string()
        .refine((v) => semver.valid(v) === v, { message: `expected an exact semver version such as ${GEMINI_DEFAULT_PIN}` })
        .default(GEMINI_DEFAULT_PIN)
        .describe('The pinned CLI version (exact semver).'),
      path: z
        .string()
        .refine((v) => v.startsWith('/'), { message: 'expected an absolute path' })
        .optional()
        .describe('Absolute path of gemini.js (or a gemini executable); only with source: path.'),
      range: z
        .string()
        .refine((v) => semver.validRange(v) !== null, { message: 'expected a valid semver range' })
        .optional()
        .describe("Semver range the CLI must satisfy; default: the pin's minor line."),
    })
    .superRefine((cli, ctx) => {
      if (cli.source === 'path' && cli.path === undefined)
        ctx.addIssue({ code: 'custom', path: ['path'], message: 'required when source is "path"' });
      if (cli.source !== 'path' && cli.path !== undefined)
        ctx.addIssue({ code: 'custom', path: ['path'], message: 'only allowed when source is "path"' });
    })
    .transform((cli) => ({ ...cli, range: cli.range ?? minorRange(cli.version) }))
    .prefault({})
    .describe('Which Gemini CLI to run.'),
  model: z.string().min(1).default('inherit').describe('Default model (gemini -m); "inherit" keeps the CLI default.'),
  autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low').describe('Default autonomy level of new sessions.'),
  env: z
    .record(z.string().regex(ENV_NAME, 'expected an environment variable name'), z.string())
    .default({})
    .describe('Extra variables for the gemini process.'),
  passEnv: z
    .array(z.string().regex(ENV_NAME, 'expected an environment variable name'))
    .default([])
    .describe('Host variables let through when set (e.g. HTTPS_PROXY, NO_PROXY, NODE_EXTRA_CA_CERTS).'),
  credentials: z
    .strictObject({
      GEMINI_API_KEY: secret('Gemini API key; default: $GEMINI_API_KEY.').meta({ env: 'GEMINI_API_KEY' }).optional(),
      GOOGLE_API_KEY: secret('Google API key; default: $GOOGLE_API_KEY.').meta({ env: 'GOOGLE_API_KEY' }).optional(),
    })
    .prefault({})
    .describe('Credentials passed to gemini, only those set; nothing else from the environment is.'),
  endpoint: z
    .strictObject({
      baseUrl: z.url().describe('Gemini API base URL without /v1beta (GOOGLE_GEMINI_BASE_URL).'),
      apiKey: secret('Key for that endpoint (sent as GEMINI_API_KEY; a secret).'),
    })
    .optional()
    .describe('Bring your own endpoint.'),
  startupTimeoutMs: z.number().int().positive().default(90_000).describe('Deadline for initialize and session/new or session/load, in ms.'),
  requestTimeoutMs: z.number().int().positive().default(30_000).describe('Deadline of other requests, in ms.'),
  drainFallbackMs: z.number().int().positive().default(3_000).describe('Longest wait for stdout to drain after exit, in ms.'),
  interruptGraceMs: z.number().int().positive().default(5_000).describe('Wait after session/cancel before escalating, in ms.'),
});
export type GeminiConfig = z.output<typeof GeminiConfigSchema>;

/** Where Gemini CLI keeps its state inside the session HOME. */
export const GEMINI_HOME_DIRS = { home: '.gemini-home', tmp: '.gemini-tmp' } as const;

/**
 * The settings that keep Gemini CLI loopback-only and quiet: no auto-update (the pinned version
 * stays the one that runs), no usage statistics, no telemetry, and the API-key auth type (without
 * it a custom base URL makes the CLI infer the `gateway` auth type).
 */
export const GEMINI_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  security: { auth: { selectedType: GEMINI_API_KEY_AUTH } },
} as const;

/**
 * The launch: `node <bundle> --acp [-m model]` with GEMINI_CLI_HOME, the trusted-folders file and
 * the system settings path inside the session HOME, and TMPDIR too (on an API error Gemini writes
 * the whole request context to the temp dir). The trust list is empty: the workspace is not
 * trusted, so its own `.gemini/` settings are not loaded and privileged modes (yolo) stay off.
 */
export function describeGeminiLaunch(
  config: GeminiConfig,
  spec: Pick<SessionSpec, 'workspace' | 'home' | 'model'>,
  bundle: string,
  hostEnv: Readonly<Record<string, string | undefined>>,
): { launch: LaunchSpec; seed: SeedFile[] } {
  const geminiHome = path.join(spec.home, GEMINI_HOME_DIRS.home);
  const model = spec.model ?? config.model;
  const args = [bundle, '--acp', ...(model && model !== 'inherit' ? ['-m', model] : [])];
  const credentials: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.credentials)) if (value) credentials[name] = value;
  const endpoint: Record<string, string> = config.endpoint
    ? { GOOGLE_GEMINI_BASE_URL: config.endpoint.baseUrl, GEMINI_API_KEY: config.endpoint.apiKey }
    : {};
  const passed: Record<string, string> = {};
  for (const name of config.passEnv) {
    const value = hostEnv[name];
    if (value) passed[name] = value;
  }
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return {
    launch: {
      command: process.execPath,
      args,
      cwd: spec.workspace,
      env: {
        ...passed,
        ...config.env,
        ...credentials,
        ...endpoint,
        GEMINI_CLI_HOME: geminiHome,
        GEMINI_CLI_TRUSTED_FOLDERS_PATH: path.join(geminiHome, '.gemini', 'trustedFolders.json'),
        GEMINI_CLI_SYSTEM_SETTINGS_PATH: path.join(geminiHome, '.gemini', 'system-settings.json'),
        GEMINI_TELEMETRY_ENABLED: 'false',
        TMPDIR: path.join(spec.home, GEMINI_HOME_DIRS.tmp),
      },
      secrets: [...Object.values(credentials), ...(config.endpoint ? [config.endpoint.apiKey] : [])],
    },
    seed: [
      { path: `${GEMINI_HOME_DIRS.home}/.gemini/settings.json`, content: json(GEMINI_SETTINGS), mode: 0o600 },
      { path: `${GEMINI_HOME_DIRS.home}/.gemini/trustedFolders.json`, content: json({}), mode: 0o600 },
      { path: `${GEMINI_HOME_DIRS.home}/.gemini/system-settings.json`, content: json({}), mode: 0o600 },
      { path: `${GEMINI_HOME_DIRS.tmp}/.keep`, content: '', mode: 0o600 },
    ],
  };
}

function geminiProfile(config: GeminiConfig, bundle: (spec: SessionSpec) => string): AcpAgentProfile {
  return {
    adapter: 'gemini',
    agent: 'gemini',
    launch: (spec) => describeGeminiLaunch(config, spec, bundle(spec), process.env),
    mcpServers: [],
    // `default`: Gemini asks before every call that is not read-only.
    askingMode: 'default',
    // Gemini CLI 0.61.0 sends no raw input; its shell tool's title is the full command.
    commandSource: 'rawInputOrTitle',
    authMethod: GEMINI_API_KEY_AUTH,
    startupTimeoutMs: config.startupTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  };
}

/** `0.61.0` (what `gemini --version` prints) → `0.61.0`. */
export function parseGeminiVersion(stdout: string): string | undefined {
  const match = /^\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\s*$/m.exec(stdout);
  return match?.[1] && semver.valid(match[1]) ? match[1] : undefined;
}

export const geminiAdapter: Adapter<GeminiConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'gemini',
  configSchema: GeminiConfigSchema,
  apiVersion: ACP_API,
  capabilities: {
    resume: 'load',
    perTurnSettings: false,
    steering: false,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  async prepare(config, ctx) {
    const located = await resolveCli(
      config.cli,
      {
        adapter: 'gemini',
        executable: 'gemini',
        platformPackage: () => GEMINI_PACKAGE,
        binPath: GEMINI_BUNDLE,
        parseVersion: parseGeminiVersion,
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
    return {
      source: config.cli.source,
      binaryPath: located.binaryPath,
      version: located.version,
      range: config.cli.range,
      expected: { apiVersion: ACP_API, protocolVersion: acpProtocolVersion(1), qualifiedBy: 'table' },
      ...(located.package ? { package: located.package } : {}),
    };
  },
  open: (config, spec, io) =>
    new AcpSession(
      geminiProfile(config, (s) => s.cli.binaryPath),
      spec,
      io,
    ),
  probe: (config, cli, launch, workdir): Promise<ProbeResult> =>
    probeAcp(
      'gemini',
      cli,
      launch,
      () => {
        const bare = { ...config, credentials: {}, endpoint: undefined };
        const described = describeGeminiLaunch(bare, { workspace: workdir, home: workdir, model: undefined }, cli.binaryPath, {});
        return { launch: { ...described.launch, secrets: [] }, seed: described.seed };
      },
      config.startupTimeoutMs,
    ),
  diagnose: (config) => [
    ...(['GEMINI_API_KEY', 'GOOGLE_API_KEY'] as const).map((name) =>
      config.credentials[name]
        ? { name: `gemini ${name}`, ok: true, detail: 'present (not shown)' }
        : { name: `gemini ${name}`, ok: true, warn: true, detail: 'not set' },
    ),
    config.endpoint
      ? { name: 'gemini endpoint', ok: true, detail: `${config.endpoint.baseUrl} (key not shown)` }
      : { name: 'gemini endpoint', ok: true, detail: 'Gemini API default' },
  ],
};
