import type { Adapter, ProbeResult, ResolvedCli } from '../adapter.js';
import { OneWorksError } from '../errors.js';
import { withThrowawaySandbox } from './throwaway.js';

/**
 * Probes a CLI binary: the adapter starts it in a throwaway sandbox (its own temporary state
 * dir, HOME and working directory), reads the versions it announces and stops it; the
 * sandbox is removed afterwards whatever happened.
 */
export async function probeCli(adapter: Adapter<unknown>, config: unknown, cli: ResolvedCli, secrets: string[] = []): Promise<ProbeResult> {
  if (!adapter.probe) throw new OneWorksError('usage', `adapter ${adapter.name} cannot be probed`);
  return withThrowawaySandbox({ purpose: 'probe', secrets }, async ({ launch, workdir, redactor }) => {
    try {
      return await adapter.probe!(config, cli, launch, workdir);
    } catch (error) {
      if (error instanceof OneWorksError) throw error;
      throw new OneWorksError('probe_failed', `probe of ${cli.binaryPath} failed: ${redactor.redact(String(error))}`, { cause: error });
    }
  });
}
