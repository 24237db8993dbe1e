import type { LaunchSpec, ResolvedCli } from '../../core/adapter.js';
import type { DroidConfig } from './config.js';
import { droidSettingsEnv, type ComposedSettings } from './settings.js';

/**
 * How droid is started, for sessions, probes and catalog listings alike: stream-jsonrpc both
 * ways in the working directory, the YAML's extra env, the configured credentials (the only
 * ones that cross, and only when set), the variables the composed settings need (BYOK keys),
 * and the auto-update switches off so the pinned CLI stays the version that runs. With `home`
 * (sessions), droid also reads One Works' managed-level settings there (see droidSettingsEnv).
 */
export function describeDroidLaunch(
  config: DroidConfig,
  cli: ResolvedCli,
  options: { cwd: string; settings: ComposedSettings; home?: string; credentials?: boolean },
): LaunchSpec {
  const credentials = options.credentials === false ? {} : configuredCredentials(config);
  return {
    command: cli.binaryPath,
    args: ['exec', '--input-format', 'stream-jsonrpc', '--output-format', 'stream-jsonrpc', '--cwd', options.cwd],
    cwd: options.cwd,
    env: {
      ...config.env,
      ...credentials,
      ...options.settings.env,
      ...(options.home ? droidSettingsEnv(options.home) : {}),
      DROID_DISABLE_AUTO_UPDATE: 'true',
      FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
    },
    secrets: [...Object.values(credentials), ...options.settings.secrets],
  };
}

/** The credentials the config names that have a value. */
export function configuredCredentials(config: DroidConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.credentials)) if (value) out[name] = value;
  return out;
}
