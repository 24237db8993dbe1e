import { describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { nearestVersions, selectVersion } from '../../../core/install/packument.js';
import { tarballUrlFor } from '../../../core/install/registry-client.js';

const packument = {
  name: '@acme/tool',
  versions: {
    '1.0.0': { version: '1.0.0', dist: { tarball: 'https://r.example/a-1.0.0.tgz', integrity: 'sha512-aaa' } },
    '1.2.0': { version: '1.2.0', dist: { tarball: 'https://r.example/a-1.2.0.tgz', integrity: 'sha512-bbb', unpackedSize: 42 } },
    '1.3.0': { version: '1.3.0', dist: { tarball: 'https://r.example/a-1.3.0.tgz' } },
  },
};

describe('selectVersion', () => {
  it('picks exactly the requested version with its dist facts', () => {
    expect(selectVersion(packument, '@acme/tool', '1.2.0')).toEqual({
      packageName: '@acme/tool',
      version: '1.2.0',
      tarballUrl: 'https://r.example/a-1.2.0.tgz',
      integrity: 'sha512-bbb',
      unpackedSize: 42,
    });
  });

  it('refuses a missing version with install_not_found listing the nearest ones', () => {
    let caught: unknown;
    try {
      selectVersion(packument, '@acme/tool', '1.1.0');
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'install_not_found')).toBe(true);
    expect((caught as Error).message).toBe('@acme/tool@1.1.0 is not published; nearest published: 1.0.0, 1.2.0, 1.3.0');
  });

  it('refuses a version without dist.integrity', () => {
    expect(() => selectVersion(packument, '@acme/tool', '1.3.0')).toThrow(/no dist.integrity/);
  });

  it('rejects a malformed packument with install_failed', () => {
    let caught: unknown;
    try {
      selectVersion({ name: 'x', versions: { '1.0.0': { version: '1.0.0' } } }, 'x', '1.0.0');
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'install_failed')).toBe(true);
  });
});

describe('nearestVersions', () => {
  it('alternates below and above the requested version, nearest first', () => {
    const published = ['0.99.0', '0.105.1', '0.109.3', '0.117.0', '0.215.0', '0.225.2'];
    expect(nearestVersions(published, '0.220.0')).toEqual(['0.215.0', '0.225.2', '0.117.0', '0.109.3']);
  });

  it('lists the newest versions when the request is above them all', () => {
    expect(nearestVersions(['1.0.0', '2.0.0'], '3.0.0')).toEqual(['2.0.0', '1.0.0']);
  });
});

describe('tarballUrlFor', () => {
  it('fetches npmjs tarballs from a configured mirror, like npm replace-registry-host=npmjs', () => {
    const url = 'https://registry.npmjs.org/@acme/tool/-/tool-1.0.0.tgz';
    expect(tarballUrlFor(url, 'https://mirror.example/npm/')).toBe('https://mirror.example/npm/@acme/tool/-/tool-1.0.0.tgz');
    expect(tarballUrlFor(url, 'https://registry.npmjs.org/')).toBe(url);
    expect(tarballUrlFor('https://cdn.example/t.tgz', 'https://mirror.example/')).toBe('https://cdn.example/t.tgz');
  });
});
