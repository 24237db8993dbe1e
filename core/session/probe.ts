import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Adapter, ChildChannel, ProbeResult, ResolvedCli } from '../adapter.js';
import { OneWorksError } from '../errors.js';
import { Redactor } from '../redact.js';
import { launchInSandbox } from './launch.js';

/**
 * Probes a CLI binary: the adapter starts it in a throwaway sandbox (its own temporary state
 * dir, HOME and working directory), reads the versions it announces and stops it; the
 * sandbox is removed afterwards whatever happened.
 */
export async function probeCli(adapter: Adapter<unknown>, config: unknown, cli: ResolvedCli, secrets: string[] = []): Promise<ProbeResult> {
  if (!adapter.probe) throw new OneWorksError('usage', `adapter ${adapter.name} cannot be probed`);
  const stateDir = await mkdtemp(join(tmpdir(), 'one-works-probe-'));
  const redactor = new Redactor();
  for (const s of secrets) redactor.register(s);
  const children: ChildChannel[] = [];
  try {
    const workdir = await mkdtemp(join(stateDir, 'work-'));
    return await adapter.probe(
      config,
      cli,
      async (launch, seed) => {
        const child = await launchInSandbox({ stateDir, sessionId: 'probe', redactor, parentEnv: process.env }, launch, seed);
        children.push(child);
        return child;
      },
      workdir,
    );
  } catch (error) {
    if (error instanceof OneWorksError) throw error;
    throw new OneWorksError('probe_failed', `probe of ${cli.binaryPath} failed: ${redactor.redact(String(error))}`, { cause: error });
  } finally {
    await Promise.allSettled(children.map((c) => c.stop('shutdown')));
    await rm(stateDir, { recursive: true, force: true });
  }
}
