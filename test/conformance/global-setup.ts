import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { geminiAdapter } from '../../adapters/acp/index.js';
import { claudeCodeAdapter } from '../../adapters/claude-code/index.js';
import { codexAdapter } from '../../adapters/codex/index.js';
import { DROID_CLI } from '../../adapters/droid/cli-source.js';
import { createPrepareServices } from '../../core/install/index.js';
import { bwrapAvailable } from '../../core/process/index.js';

/**
 * Global setup of the vitest 'conformance' project: installs the real droid CLIs the tests
 * drive, with One Works' own managed installer, from the npm registry into a cache inside the
 * checkout (`.cache/conformance`, git-ignored; a warm cache makes later runs offline), and
 * exports their paths to the test workers:
 *   ONE_WORKS_TEST_DROID       droid 0.225.2 (protocol 1.220.0), the default pin
 *   ONE_WORKS_TEST_DROID_0215  droid 0.215.0 (protocol 1.206.0)
 *   ONE_WORKS_TEST_CLAUDE      Claude Code 2.1.333, the native binary of @anthropic-ai/claude-code-linux-x64
 *   ONE_WORKS_TEST_CODEX       Codex 0.171.0, the native binary of @openai/codex@0.171.0-linux-x64
 *   ONE_WORKS_TEST_GEMINI      Gemini CLI 0.61.0, the bundle of @google/gemini-cli (run with this Node)
 *   ONE_WORKS_TEST_CACHE       the cache root, for configs using `source: managed`
 */
export const CONFORMANCE_CACHE = fileURLToPath(new URL('../../.cache/conformance', import.meta.url));

export default async function setup(): Promise<void> {
  const started = Date.now();
  await ensureBubblewrap();
  const install = (version: string) =>
    createPrepareServices().resolveCli({ source: 'managed', version }, DROID_CLI, {
      services: createPrepareServices(),
      cacheDir: CONFORMANCE_CACHE,
      lock: new Map(),
    });
  const claude = claudeCodeAdapter.prepare(claudeCodeAdapter.configSchema.parse({ cli: { version: '2.1.333' } }), {
    services: createPrepareServices(),
    cacheDir: CONFORMANCE_CACHE,
    lock: new Map(),
  });
  const codex = codexAdapter.prepare(codexAdapter.configSchema.parse({ cli: { version: '0.171.0' } }), {
    services: createPrepareServices(),
    cacheDir: CONFORMANCE_CACHE,
    lock: new Map(),
  });
  const gemini = geminiAdapter.prepare(geminiAdapter.configSchema.parse({ cli: { version: '0.61.0' } }), {
    services: createPrepareServices(),
    cacheDir: CONFORMANCE_CACHE,
    lock: new Map(),
  });
  const [current, previous, claudeCli, codexCli, geminiCli] = await Promise.all([
    install('0.225.2'),
    install('0.215.0'),
    claude,
    codex,
    gemini,
  ]);
  process.env.ONE_WORKS_TEST_CLAUDE = claudeCli.binaryPath;
  process.env.ONE_WORKS_TEST_CODEX = codexCli.binaryPath;
  process.env.ONE_WORKS_TEST_GEMINI = geminiCli.binaryPath;
  process.env.ONE_WORKS_TEST_DROID = current.binaryPath;
  process.env.ONE_WORKS_TEST_DROID_0215 = previous.binaryPath;
  process.env.ONE_WORKS_TEST_CACHE = CONFORMANCE_CACHE;
  const how = (c: typeof current) => (c.package?.fromCache ? 'cached' : 'installed');
  process.stderr.write(
    `conformance: droid ${current.version} ${how(current)}, ${previous.version} ${how(previous)}, claude ${claudeCli.version} ${how(claudeCli)}, codex ${codexCli.version} ${how(codexCli)}, gemini ${geminiCli.version} ${how(geminiCli)} in ${((Date.now() - started) / 1000).toFixed(1)}s (${CONFORMANCE_CACHE})\n`,
  );
}

// `sandbox: bwrap` is tested for real. On a fresh machine of this project's kind (root, Debian)
// bubblewrap is installed from Debian's packages here; elsewhere the message says what to do.
async function ensureBubblewrap(): Promise<void> {
  if (await bwrapAvailable()) return;
  if (process.getuid?.() === 0) {
    const apt = (args: string[]) =>
      execFileSync('apt-get', args, { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    try {
      apt(['install', '-y', '--no-install-recommends', 'bubblewrap']);
    } catch {
      apt(['update']);
      apt(['install', '-y', '--no-install-recommends', 'bubblewrap']);
    }
    if (await bwrapAvailable()) return;
  }
  throw new Error('the conformance tests need bubblewrap (bwrap) able to create namespaces: install it, e.g. `apt-get install bubblewrap`');
}
