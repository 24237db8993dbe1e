import type { CliDescriptor, VersionFacts } from '../../core/adapter.js';

/** The CLI declaration of the in-memory fake adapter: no package, a `fake 1.2.3` version line. */
export const FAKE_CLI: CliDescriptor = {
  adapter: 'fake',
  displayName: 'fake',
  executable: 'fake-agent',
  packages: {},
  binPath: () => 'bin/fake-agent',
  parseVersion: (line) => /^fake (\d+\.\d+\.\d+)$/.exec(line)?.[1],
  versionFacts: (version) => (version.startsWith('1.') ? { fakeVersion: version } : undefined),
};

/** The fake's check: the announced `fakeVersion` is the binary's version. */
export function checkFakeFacts(announced: VersionFacts, _expected: unknown, cliVersion: string): string[] {
  return announced.fakeVersion === cliVersion ? [] : [`fakeVersion ${announced.fakeVersion ?? '(none)'}, expected ${cliVersion}`];
}
