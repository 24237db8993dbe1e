/**
 * Runs one installPackage in its own process so a test can SIGKILL it mid-download.
 * Usage: node --import tsx test/support/install-child.ts '<json InstallChildArgs>'
 * Prints each progress report as one JSON line on stdout; exits 0 on success, 1 with the error code.
 */
import { installPackage, restoreDeferredCaCerts } from '../../core/install/index.js';

export interface InstallChildArgs {
  registryUrl: string;
  packageName: string;
  version: string;
  targetDir: string;
  binPath: string;
  /** Call restoreDeferredCaCerts first, as `serve` does (a child started with deferCaCerts). */
  restoreDeferredCa?: boolean;
}

const args = JSON.parse(process.argv[2] ?? '{}') as InstallChildArgs;
if (args.restoreDeferredCa) restoreDeferredCaCerts(process.env);

installPackage({
  packageName: args.packageName,
  version: args.version,
  targetDir: args.targetDir,
  binPath: args.binPath,
  registry: { registry: args.registryUrl, scopes: {}, authTokens: {} },
  fetchOptions: { fetchRetries: 0 },
  onProgress: (report) => process.stdout.write(`${JSON.stringify(report)}\n`),
}).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: (error as { code?: string }).code ?? String(error) })}\n`);
    process.exit(1);
  },
);
