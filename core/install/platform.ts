import { existsSync, readFileSync } from 'node:fs';
import type { CliDescriptor, PlatformTarget } from '../adapter.js';
import { OneWorksError } from '../errors.js';

/** This machine's platform facts: OS, CPU architecture, C library (Linux) and AVX2 support. */
export function detectPlatform(platform: NodeJS.Platform = process.platform, arch: string = process.arch): PlatformTarget {
  return { platform, arch, libc: detectLibc(platform, arch), hasAvx2: detectAvx2(platform) };
}

/** `musl` when the musl dynamic loader is present (Alpine), `glibc` on other Linux systems, undefined elsewhere. */
export function detectLibc(platform: NodeJS.Platform = process.platform, arch: string = process.arch): PlatformTarget['libc'] {
  if (platform !== 'linux') return undefined;
  const loader = arch === 'arm64' ? '/lib/ld-musl-aarch64.so.1' : '/lib/ld-musl-x86_64.so.1';
  return existsSync(loader) ? 'musl' : 'glibc';
}

/**
 * Whether the CPU has AVX2, from the `flags` lines of /proc/cpuinfo on Linux. Undefined on
 * other systems or when the file cannot be read (finding out there would need a child process).
 */
export function detectAvx2(platform: NodeJS.Platform = process.platform, cpuinfo?: string): boolean | undefined {
  if (platform !== 'linux') return undefined;
  let text = cpuinfo;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return undefined;
    }
  }
  const flagLines = text.split('\n').filter((line) => /^flags\s*:/.test(line));
  if (flagLines.length === 0) return undefined;
  return flagLines.every((line) => line.split(':')[1]?.trim().split(/\s+/).includes('avx2'));
}

/**
 * The npm package carrying the descriptor's binary for `target`: the `-musl` entry on a musl
 * Linux when there is one, else the plain entry; its baseline build when the CPU lacks AVX2.
 * Throws `unsupported_platform` naming the supported platforms otherwise.
 */
export function selectPlatformPackage(
  descriptor: Pick<CliDescriptor, 'adapter' | 'displayName' | 'packages'>,
  target: PlatformTarget,
): string {
  const key = `${target.platform}-${target.arch}`;
  const musl = target.libc === 'musl' ? descriptor.packages[`${key}-musl`] : undefined;
  const entry = musl ?? (Object.hasOwn(descriptor.packages, key) ? descriptor.packages[key] : undefined);
  if (!entry) {
    const shown = target.libc === 'musl' ? `${key}-musl` : key;
    throw new OneWorksError(
      'unsupported_platform',
      `${descriptor.displayName} is not published for ${shown}; supported: ${Object.keys(descriptor.packages).join(', ')}. Use adapters.${descriptor.adapter}.cli.source: path with a binary built for this machine`,
      { data: { platform: target.platform, arch: target.arch, libc: target.libc ?? null } },
    );
  }
  return target.hasAvx2 === false && entry.baseline ? entry.baseline : entry.name;
}
