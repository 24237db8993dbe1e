import type { PrepareServices } from '../adapter.js';
import { runCommand } from '../process/run-command.js';
import { readInstallMarker } from './install-marker.js';
import { installPackage } from './install-package.js';
import { readNpmConfig } from './npm-config.js';

/** The real services behind `PrepareContext.services`. */
export function createPrepareServices(): PrepareServices {
  return {
    installPackage,
    isInstalled: async (dir, packageName, version) => (await readInstallMarker(dir, packageName, version)) !== undefined,
    readNpmConfig,
    runCommand,
  };
}
