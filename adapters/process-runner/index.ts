import { randomUUID } from 'node:crypto';
import { access, constants, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  ADAPTER_CONTRACT_VERSION,
  type Adapter,
  type AdapterCapabilities,
  type NativeForker,
  type ResolvedCli,
  type VersionFacts,
} from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { type HarnessConfig, HarnessSchema, type ProcessConfig, ProcessConfigSchema } from './config.js';
import { probeRunner } from './probe.js';
import { copyCheckpoint } from './checkpoint.js';
import { CHECKPOINT_DIR, RunnerSession } from './session.js';
import { RUNNER_PROTOCOL_VERSION } from './wire.js';

/** What `adapters probe` and `doctor` see a runner announce: the protocol family. */
export const RUNNER_API = 'runner-frame';

const CAPABILITIES: AdapterCapabilities = {
  resume: 'respawn',
  perTurnSettings: false,
  steering: true,
  titles: false,
  authoritativeCatalog: false,
  oneTurnPerProcess: false,
};

/**
 * A runner announces the protocol it speaks in its reply to `open` (the probe reads it): it must
 * be the one this adapter implements.
 */
function checkRunnerFacts(announced: VersionFacts): string[] {
  const problems: string[] = [];
  if (announced.api !== RUNNER_API) problems.push(`the runner speaks ${JSON.stringify(announced.api ?? null)}, not ${RUNNER_API}`);
  if (announced.protocolVersion !== RUNNER_PROTOCOL_VERSION)
    problems.push(`the runner's protocol version is ${JSON.stringify(announced.protocolVersion ?? null)}, not ${RUNNER_PROTOCOL_VERSION}`);
  return problems;
}

/**
 * `one-works fork` of a runner session: the fork gets a new native id whose checkpoint store
 * holds a verified copy of the source's latest checkpoint up to the fork point; its first
 * prompt then restores the runner's directory from it and opens it (`resumed: true`), so the
 * model sees the source's conversation. The source's directory and checkpoints are only read.
 */
const RUNNER_FORKER: NativeForker = {
  async fork({ sourceDir, sourceNativeId, runs, targetDir }) {
    const nativeSessionId = randomUUID();
    try {
      const copied = await copyCheckpoint(
        path.join(sourceDir, CHECKPOINT_DIR, sourceNativeId),
        runs,
        path.join(targetDir, CHECKPOINT_DIR, nativeSessionId),
      );
      return copied ? { nativeSessionId, runId: copied.runId } : undefined;
    } catch (error) {
      // The fork's session directory is new and holds nothing but this copy: no half fork is left behind.
      await rm(targetDir, { recursive: true, force: true });
      throw error;
    }
  },
};

/**
 * The `process` entry of the adapter map: it only carries the `adapters.process` block (its
 * harnesses). Sessions run under `process:<name>`, see {@link harnessAdapter}; using `process`
 * itself is a usage error that names them.
 */
export const processAdapter: Adapter<ProcessConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'process',
  configSchema: ProcessConfigSchema,
  checkVersionFacts: checkRunnerFacts,
  capabilities: CAPABILITIES,
  prepare(config) {
    const names = Object.keys(config.harnesses);
    return Promise.reject(
      new OneWorksError(
        'usage',
        names.length === 0
          ? 'the process adapter runs harnesses: declare one under adapters.process.harnesses and use --adapter process:<name>'
          : `name a harness: --adapter process:<name> (declared: ${names.join(', ')})`,
      ),
    );
  },
  open() {
    throw new OneWorksError('usage', 'the process adapter runs harnesses: use --adapter process:<name>');
  },
};

/**
 * The adapter of one harness (`process:<name>`): its config is the harness block. `prepare`
 * finds the command (absolute, or on PATH) and checks that it can be executed; a runner has no
 * managed install and no version of its own, so the resolved "CLI" carries the protocol version.
 */
export function harnessAdapter(name: string): Adapter<HarnessConfig> {
  const adapterName = `process:${name}`;
  return {
    contractVersion: ADAPTER_CONTRACT_VERSION,
    name: adapterName,
    configSchema: HarnessSchema,
    checkVersionFacts: checkRunnerFacts,
    capabilities: CAPABILITIES,
    async prepare(config): Promise<ResolvedCli> {
      const binaryPath = await findCommand(config.command, process.env.PATH ?? '');
      if (!binaryPath) {
        throw new OneWorksError(
          'cli_not_found',
          `${adapterName}: command ${JSON.stringify(config.command)} is not an executable file${path.isAbsolute(config.command) ? '' : ' on PATH'}; fix adapters.process.harnesses.${name}.command`,
        );
      }
      return {
        source: 'path',
        binaryPath,
        version: RUNNER_PROTOCOL_VERSION,
        range: RUNNER_PROTOCOL_VERSION,
        expected: { facts: { api: RUNNER_API, protocolVersion: RUNNER_PROTOCOL_VERSION }, qualifiedBy: 'table' },
      };
    },
    open: (config, spec, io) => new RunnerSession(adapterName, { ...config, command: spec.cli.binaryPath }, spec, io),
    probe: (config, cli, launch, workdir) => probeRunner(config, cli, launch, workdir),
    forker: RUNNER_FORKER,
    diagnose: (config) => [
      { name: `${adapterName} command`, ok: true, detail: [config.command, ...config.args].join(' ') },
      config.provider.apiKey
        ? { name: `${adapterName} provider`, ok: true, detail: `${config.provider.baseUrl ?? '(no base URL)'} (key not shown)` }
        : { name: `${adapterName} provider`, ok: true, warn: true, detail: 'no apiKey: the runner gets no credentials' },
    ],
  };
}

// The absolute path of an executable `command` (a path, or a name looked up on `searchPath`).
async function findCommand(command: string, searchPath: string): Promise<string | undefined> {
  const candidates = command.includes('/')
    ? [path.resolve(command)]
    : searchPath
        .split(path.delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export { harnessName, HarnessSchema, ProcessConfigSchema } from './config.js';
export type { HarnessConfig, ProcessConfig } from './config.js';
