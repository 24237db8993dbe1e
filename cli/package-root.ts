import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The installation's root: cli/ sits right below it in the sources, dist/cli/ two levels below
// it in the build (npm run build), where no package.json is one level up.
const sourcesRoot = new URL('../', import.meta.url);

/** The directory holding package.json and cli/bin.cjs, whether this module runs from sources or from dist/. */
export const PACKAGE_ROOT = fileURLToPath(
  existsSync(new URL('package.json', sourcesRoot)) ? sourcesRoot : new URL('../../', import.meta.url),
);

/** `cli/bin.cjs` of this installation: the command's entry point (it picks the build or the sources). */
export const BIN_PATH = join(PACKAGE_ROOT, 'cli', 'bin.cjs');

/**
 * The package version from package.json. Read at once (a local file of a few KB): every command
 * reads it as it starts, and the thread pool's round trips of an asynchronous read (open, stat,
 * read, close) would wait on each other there; the orchestrator fingerprint counts it too.
 */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
