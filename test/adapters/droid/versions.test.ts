import { describe, expect, it } from 'vitest';
import { DROID_DEFAULT_PIN } from '../../../adapters/droid/config.js';
import {
  DEFAULT_PIN,
  DEFAULT_PROTOCOL_FOR_PROBE,
  detectAvx2,
  droidBinPath,
  KNOWN_PACKAGE_VERSIONS,
  lookupVersion,
  platformPackage,
} from '../../../adapters/droid/versions.js';
import { isOneWorksError } from '../../../core/errors.js';

describe('lookupVersion', () => {
  it('qualifies every patch of a known minor line from the table', () => {
    expect(lookupVersion('0.225.2')).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.220.0', qualifiedBy: 'table' });
    expect(lookupVersion('0.225.9')).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.220.0', qualifiedBy: 'table' });
    expect(lookupVersion('0.215.0')).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.206.0', qualifiedBy: 'table' });
  });

  it('falls back to the lock for a version the table lacks, and the table wins where it has one', () => {
    const lock = new Map([
      ['0.230.1', { apiVersion: '1.0.0', protocolVersion: '1.230.0' }],
      ['0.225.2', { apiVersion: '9.9.9', protocolVersion: '9.9.9' }],
    ]);
    expect(lookupVersion('0.230.1', lock)).toEqual({ apiVersion: '1.0.0', protocolVersion: '1.230.0', qualifiedBy: 'lock' });
    expect(lookupVersion('0.225.2', lock)?.qualifiedBy).toBe('table');
  });

  it('is undefined for unknown, prerelease-only and malformed versions', () => {
    expect(lookupVersion('0.230.1')).toBeUndefined();
    expect(lookupVersion('0.225.3-beta.1')).toBeUndefined();
    expect(lookupVersion('not-a-version')).toBeUndefined();
  });
});

describe('platformPackage', () => {
  it('picks the regular build when the CPU has AVX2 or when that is unknown', () => {
    expect(platformPackage({ platform: 'linux', arch: 'x64', hasAvx2: true })).toBe('@factory/cli-linux-x64');
    expect(platformPackage({ platform: 'linux', arch: 'x64', hasAvx2: undefined })).toBe('@factory/cli-linux-x64');
    expect(platformPackage({ platform: 'darwin', arch: 'arm64', hasAvx2: undefined })).toBe('@factory/cli-darwin-arm64');
  });

  it('picks the baseline build on x64 without AVX2, where one exists', () => {
    expect(platformPackage({ platform: 'linux', arch: 'x64', hasAvx2: false })).toBe('@factory/cli-linux-x64-baseline');
    expect(platformPackage({ platform: 'win32', arch: 'x64', hasAvx2: false })).toBe('@factory/cli-win32-x64-baseline');
    expect(platformPackage({ platform: 'linux', arch: 'arm64', hasAvx2: false })).toBe('@factory/cli-linux-arm64');
  });

  it('refuses an unsupported platform with unsupported_platform', () => {
    let caught: unknown;
    try {
      platformPackage({ platform: 'freebsd', arch: 'x64', hasAvx2: true });
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'unsupported_platform')).toBe(true);
    expect((caught as Error).message).toMatch(/^droid is not published for freebsd-x64; supported: /);
  });

  it('names the binary inside the package per platform', () => {
    expect(droidBinPath('linux')).toBe('bin/droid');
    expect(droidBinPath('win32')).toBe('bin/droid.exe');
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

describe('the pins', () => {
  it('keeps the default pin in the config schema and the table in step, and qualified', () => {
    expect(DEFAULT_PIN).toBe(DROID_DEFAULT_PIN);
    expect(lookupVersion(DEFAULT_PIN)?.protocolVersion).toBe(DEFAULT_PROTOCOL_FOR_PROBE);
    expect(KNOWN_PACKAGE_VERSIONS['@factory/cli-linux-x64']).toContain(DEFAULT_PIN);
    expect(KNOWN_PACKAGE_VERSIONS['@factory/cli-linux-x64-baseline']).toContain(DEFAULT_PIN);
  });
});
