import { describe, expect, it } from 'vitest';
import { DROID_CLI } from '../../../adapters/droid/cli-source.js';
import { DROID_DEFAULT_PIN } from '../../../adapters/droid/config.js';
import {
  checkDroidFacts,
  DEFAULT_PIN,
  DEFAULT_PROTOCOL_FOR_PROBE,
  KNOWN_PACKAGE_VERSIONS,
  lookupDroidFacts,
} from '../../../adapters/droid/versions.js';
import { isOneWorksError } from '../../../core/errors.js';
import { detectAvx2, lookupVersionFacts, selectPlatformPackage } from '../../../core/install/index.js';

const droidTarget = (platform: NodeJS.Platform, arch: string, hasAvx2: boolean | undefined, libc?: 'glibc' | 'musl') => ({
  platform,
  arch,
  hasAvx2,
  libc: libc ?? (platform === 'linux' ? ('glibc' as const) : undefined),
});

describe('droid version table, through the one resolver lookup', () => {
  it('qualifies every patch of a known minor line from the table', () => {
    expect(lookupVersionFacts('0.225.2', DROID_CLI)).toEqual({
      facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' },
      qualifiedBy: 'table',
    });
    expect(lookupVersionFacts('0.225.9', DROID_CLI)?.facts).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.220.0' });
    expect(lookupVersionFacts('0.215.0', DROID_CLI)?.facts).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.206.0' });
  });

  it('falls back to the lock for a version the table lacks, and the table wins where it has one', () => {
    const lock = new Map([
      ['0.230.1', { facts: { apiVersion: '1.0.0', protocolVersion: '1.230.0' } }],
      ['0.225.2', { facts: { apiVersion: '9.9.9', protocolVersion: '9.9.9' } }],
    ]);
    expect(lookupVersionFacts('0.230.1', DROID_CLI, lock)).toEqual({
      facts: { apiVersion: '1.0.0', protocolVersion: '1.230.0' },
      qualifiedBy: 'lock',
    });
    expect(lookupVersionFacts('0.225.2', DROID_CLI, lock)?.qualifiedBy).toBe('table');
  });

  it('is undefined for unknown, prerelease-only and malformed versions', () => {
    expect(lookupVersionFacts('0.230.1', DROID_CLI)).toBeUndefined();
    expect(lookupVersionFacts('0.225.3-beta.1', DROID_CLI)).toBeUndefined();
    expect(lookupVersionFacts('not-a-version', DROID_CLI)).toBeUndefined();
  });
});

describe('droid platform packages, through the one resolver selection', () => {
  it('picks the regular build when the CPU has AVX2 or when that is unknown', () => {
    expect(selectPlatformPackage(DROID_CLI, droidTarget('linux', 'x64', true))).toBe('@factory/cli-linux-x64');
    expect(selectPlatformPackage(DROID_CLI, droidTarget('linux', 'x64', undefined))).toBe('@factory/cli-linux-x64');
    expect(selectPlatformPackage(DROID_CLI, droidTarget('darwin', 'arm64', undefined))).toBe('@factory/cli-darwin-arm64');
  });

  it('picks the baseline build on x64 without AVX2, where one exists', () => {
    expect(selectPlatformPackage(DROID_CLI, droidTarget('linux', 'x64', false))).toBe('@factory/cli-linux-x64-baseline');
    expect(selectPlatformPackage(DROID_CLI, droidTarget('win32', 'x64', false))).toBe('@factory/cli-win32-x64-baseline');
    expect(selectPlatformPackage(DROID_CLI, droidTarget('linux', 'arm64', false))).toBe('@factory/cli-linux-arm64');
  });

  it('takes the plain build on a musl Linux, since droid publishes no musl build', () => {
    expect(selectPlatformPackage(DROID_CLI, droidTarget('linux', 'x64', true, 'musl'))).toBe('@factory/cli-linux-x64');
  });

  it('refuses an unsupported platform with unsupported_platform', () => {
    let caught: unknown;
    try {
      selectPlatformPackage(DROID_CLI, droidTarget('freebsd', 'x64', true));
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'unsupported_platform')).toBe(true);
    expect((caught as Error).message).toMatch(/^droid is not published for freebsd-x64; supported: /);
    expect((caught as Error).message).toContain('adapters.droid.cli.source: path');
  });

  it('names the binary inside the package per platform', () => {
    expect(DROID_CLI.binPath('linux', 'x64')).toBe('bin/droid');
    expect(DROID_CLI.binPath('win32', 'x64')).toBe('bin/droid.exe');
  });
});

describe('detectAvx2', () => {
  const cpu = (flags: string) => `processor\t: 0\nflags\t\t: ${flags}\n\nprocessor\t: 1\nflags\t\t: ${flags}\n`;

  it('reads the flags lines of /proc/cpuinfo', () => {
    expect(detectAvx2('linux', cpu('fpu sse2 avx avx2 bmi2'))).toBe(true);
    expect(detectAvx2('linux', cpu('fpu sse2 avx'))).toBe(false);
  });

  it('does not mistake avx2-prefixed flags for avx2', () => {
    expect(detectAvx2('linux', cpu('fpu avx512f avx2x'))).toBe(false);
  });

  it('is unknown off Linux and without flags lines', () => {
    expect(detectAvx2('darwin', cpu('avx2'))).toBeUndefined();
    expect(detectAvx2('linux', 'processor : 0\n')).toBeUndefined();
  });
});

describe('checkDroidFacts', () => {
  const table = { facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' }, qualifiedBy: 'table' as const };

  it('accepts the recorded API and protocol', () => {
    expect(checkDroidFacts({ apiVersion: '1.0.0', protocolVersion: '1.220.0' }, table, '0.225.2')).toEqual([]);
  });

  it('names a missing API, a different API, a malformed protocol and a protocol the record does not hold', () => {
    expect(checkDroidFacts({ protocolVersion: '1.220.0' }, table, '0.225.2')).toEqual(['no API version announced']);
    expect(checkDroidFacts({ apiVersion: '2.0.0', protocolVersion: '1.220.0' }, table, '0.225.2')).toEqual([
      'API version 2.0.0, expected 1.0.0',
    ]);
    expect(checkDroidFacts({ apiVersion: '1.0.0', protocolVersion: 'x' }, table, '0.225.2')).toEqual([
      'protocol version "x" is missing or malformed',
    ]);
    expect(checkDroidFacts({ apiVersion: '1.0.0', protocolVersion: '1.219.0' }, table, '0.225.2')).toEqual([
      'protocol 1.219.0, but the built-in table records 1.220.0 for 0.225.2',
    ]);
  });

  it('accepts any well-formed protocol for an unqualified version (the probe that qualifies it)', () => {
    expect(checkDroidFacts({ apiVersion: '1.0.0', protocolVersion: '1.230.0' }, undefined, '0.230.0')).toEqual([]);
  });
});

describe('the pins', () => {
  it('keeps the default pin in the config schema and the table in step, and qualified', () => {
    expect(DEFAULT_PIN).toBe(DROID_DEFAULT_PIN);
    expect(lookupDroidFacts(DEFAULT_PIN)?.protocolVersion).toBe(DEFAULT_PROTOCOL_FOR_PROBE);
    expect(KNOWN_PACKAGE_VERSIONS['@factory/cli-linux-x64']).toContain(DEFAULT_PIN);
    expect(KNOWN_PACKAGE_VERSIONS['@factory/cli-linux-x64-baseline']).toContain(DEFAULT_PIN);
  });
});
