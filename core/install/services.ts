import type { PrepareServices } from '../adapter.js';

/**
 * The real services behind `PrepareContext.services`. The installer and the command runner are
 * loaded on first use (they pull in npm-registry-fetch, tar and execa), so a command that never
 * installs or runs a CLI does not pay for them at start-up.
 */
export function createPrepareServices(): PrepareServices {
  return {
    installPackage: async (options) => (await import('./install-package.js')).installPackage(options),
    isInstalled: async (dir, packageName, version) =>
      (await (await import('./install-marker.js')).readInstallMarker(dir, packageName, version)) !== undefined,
    readNpmConfig: async (options) => (await import('./npm-config.js')).readNpmConfig(options),
    runCommand: async (file, args, options) => (await import('../process/run-command.js')).runCommand(file, args, options),
    resolveCli: async (selection, descriptor, ctx) => (await import('./resolve-cli.js')).resolveCli(selection, descriptor, ctx),
  };
}
