import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const FIXTURE = fileURLToPath(new URL('../fixtures/module-log/', import.meta.url));
/** The repository's root, as the logged module paths start. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs `one-works --config <a config with only a state directory> ...args` from the sources in a
 * child whose module hooks (test/fixtures/module-log) log every module it loads. Returns the
 * command's result, the loaded `file:` URLs and the temporary directory (the caller removes it).
 */
export async function loggedModules(
  prefix: string,
  args: string[],
): Promise<{
  dir: string;
  result: { exitCode?: number; stdout: string; stderr: string };
  loaded: string[];
}> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const config = join(dir, 'one-works.yaml');
  await writeFile(config, `state: { directory: ${join(dir, 'state')} }\n`);
  const logFile = join(dir, 'modules.log');
  const result = await execa(
    process.execPath,
    ['--import', 'tsx', '--import', join(FIXTURE, 'register.mjs'), join(FIXTURE, 'run-cli.ts'), '--config', config, ...args],
    { cwd: ROOT, env: { MODULE_LOG_FILE: logFile }, reject: false, stdin: 'ignore' },
  );
  const loaded = (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter((url) => url.startsWith('file:'));
  return { dir, result: { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) }, loaded };
}

/** The adapter modules (not config schemas) among logged module URLs, as paths below adapters/. */
export function adapterModules(urls: readonly string[]): string[] {
  return urls
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url))
    .filter((path) => path.startsWith(join(ROOT, 'adapters/')) && !path.endsWith('/config.ts'))
    .map((path) => path.slice(join(ROOT, 'adapters/').length));
}
