import { link, open, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import semver from 'semver';
import {
  ADAPTER_CONTRACT_VERSION,
  type Adapter,
  type CliDescriptor,
  type LaunchSpec,
  type ProbeResult,
  type SeedFile,
  type SessionSpec,
} from '../../core/adapter.js';
import { geminiCatalog } from './catalog.js';
import { GEMINI_API_KEY_AUTH, GEMINI_BUNDLE, GEMINI_DEFAULT_PIN, GEMINI_PACKAGE, type GeminiConfig, GeminiConfigSchema } from './config.js';
import { probeAcp } from './probe.js';
import { ACP_FACTS, type AcpAgentProfile, AcpSession, checkAcpFacts } from './session.js';

/**
 * Gemini CLI (`@google/gemini-cli`) as an ACP agent: `gemini --acp`. The package is a JavaScript
 * bundle with no runtime dependencies; One Works installs it (managed) and runs the bundle with
 * the Node that runs One Works itself, never a `node` found on PATH.
 */

/** Where Gemini CLI keeps its state inside the session HOME. */
export const GEMINI_HOME_DIRS = { home: '.gemini-home', tmp: '.gemini-tmp' } as const;

/**
 * The settings that keep Gemini CLI loopback-only and quiet: no auto-update (the pinned version
 * stays the one that runs), no usage statistics, no telemetry, and the API-key auth type (without
 * it a custom base URL makes the CLI infer the `gateway` auth type). Session retention off: One
 * Works keeps a session as long as its user does, and 0.61.0's cleanup at every start deletes all
 * chat records sharing a short id with a record it finds empty, which a `session/load` leaves
 * behind (see setAsideGeminiChatRecords), so with it on the second load would find nothing.
 */
export const GEMINI_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, sessionRetention: { enabled: false } },
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

/**
 * Gemini CLI 0.61.0's chat record names, as its ChatRecordingService makes them for a main session:
 * `session-<YYYY-MM-DDTHH-MM>-<first 8 characters of the session id>.jsonl` (the minute it starts).
 */
const RECORDER_NAME = /^session-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2})-([A-Za-z0-9_-]{8})\.jsonl$/;

/**
 * Why a Gemini session can be loaded only after this: 0.61.0's `session/load` first initializes its
 * config for the session id, which starts a *fresh* chat record for that id, named by the current
 * minute, and appends a header plus a `$set` of the message list (only the session context) to that
 * file; only then does it look the session up. When the load runs in the same minute as the
 * session's creation (a quick `send`), that is the recorded conversation's own file: the `$set`
 * wipes its messages, the lookup finds no resumable session ("No previous sessions found for this
 * project", `-32603 Internal error`), and the record stays wiped. Moving the session's records to a
 * name the recorder never makes (`session-<minute>-loaded[N]-<id8>.jsonl`, never replacing a file; Gemini finds sessions by the
 * id inside the file, not by its name) keeps the fresh record in a file of its own. Only files of
 * this session id in this session's own Gemini home are renamed; nothing is rewritten.
 */
export async function setAsideGeminiChatRecords(geminiHome: string, sessionId: string): Promise<string[]> {
  const projects = path.join(geminiHome, '.gemini', 'tmp');
  const moved: string[] = [];
  for (const project of await readdir(projects, { withFileTypes: true }).catch(() => [])) {
    if (!project.isDirectory()) continue;
    const chats = path.join(projects, project.name, 'chats');
    for (const name of await readdir(chats).catch(() => [] as string[])) {
      const match = RECORDER_NAME.exec(name);
      if (!match || match[2] !== sessionId.slice(0, 8)) continue;
      const file = path.join(chats, name);
      if ((await recordSessionId(file)) !== sessionId) continue;
      // A name of its own, never an existing file's (link fails rather than replace one).
      for (let attempt = 0; ; attempt++) {
        const target = path.join(chats, `session-${match[1]}-loaded${attempt || ''}-${match[2]}.jsonl`);
        try {
          await link(file, target);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw error;
        }
        await unlink(file);
        moved.push(target);
        break;
      }
    }
  }
  return moved;
}

// The session id in a chat record's first line (its header), if it has one.
async function recordSessionId(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const line = buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '';
    const header = JSON.parse(line) as { sessionId?: unknown };
    return typeof header.sessionId === 'string' ? header.sessionId : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

function geminiProfile(config: GeminiConfig, bundle: (spec: SessionSpec) => string): AcpAgentProfile {
  return {
    adapter: 'gemini',
    agent: 'gemini',
    launch: (spec) => describeGeminiLaunch(config, spec, bundle(spec), process.env),
    // None: Gemini CLI 0.61.0 connects no MCP server in an untrusted folder (McpClientManager
    // returns before connecting; a stdio one would throw "current folder is not trusted"), and
    // One Works never trusts the workspace (trust would load its .gemini settings and hooks).
    mcpServers: [],
    // `default`: Gemini asks before every call that is not read-only.
    askingMode: 'default',
    // Gemini CLI 0.61.0 sends no raw input; its shell tool's title is the full command.
    commandSource: 'rawInputOrTitle',
    authMethod: GEMINI_API_KEY_AUTH,
    // 0.61.0 reports the turn's tokens in the prompt result's `_meta.quota`, not in `usage`.
    metaQuotaUsage: true,
    beforeLoad: async (spec, sessionId) => {
      await setAsideGeminiChatRecords(path.join(spec.home, GEMINI_HOME_DIRS.home), sessionId);
    },
    startupTimeoutMs: config.startupTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  };
}

/** `0.61.0` (what `gemini --version` prints) → `0.61.0`. */
export function parseGeminiVersion(stdout: string): string | undefined {
  const match = /^\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\s*$/m.exec(stdout);
  return match?.[1] && semver.valid(match[1]) ? match[1] : undefined;
}

/**
 * Gemini CLI for core's one resolver: one JavaScript package for every platform (the bundle runs
 * on the Node that runs One Works), the bundle as its binary.
 */
const GEMINI_CLI: CliDescriptor = {
  adapter: 'gemini',
  displayName: 'gemini',
  executable: 'gemini',
  packages: Object.fromEntries(
    ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'].map((key) => [key, { name: GEMINI_PACKAGE }]),
  ),
  binPath: () => GEMINI_BUNDLE,
  parseVersion: parseGeminiVersion,
  versionFacts: (version) => (version === GEMINI_DEFAULT_PIN ? ACP_FACTS : undefined),
};

export const geminiAdapter: Adapter<GeminiConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'gemini',
  configSchema: GeminiConfigSchema,
  cli: GEMINI_CLI,
  checkVersionFacts: checkAcpFacts,
  catalog: geminiCatalog,
  capabilities: {
    // session/load, after setAsideGeminiChatRecords (0.61.0 would wipe a record of the same minute).
    resume: 'load',
    perTurnSettings: false,
    steering: false,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  async prepare(config, ctx) {
    const cli = await ctx.services.resolveCli(config.cli, GEMINI_CLI, { ...ctx, lock: new Map() });
    // Every Gemini CLI version is held to ACP v1 (what 0.61.0 announces).
    return { ...cli, expected: { facts: ACP_FACTS, qualifiedBy: 'table' } };
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

export { GEMINI_API_KEY_AUTH, GEMINI_BUNDLE, GEMINI_DEFAULT_PIN, GEMINI_PACKAGE, type GeminiConfig, GeminiConfigSchema };
