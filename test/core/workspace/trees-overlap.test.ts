import { describe, expect, it } from 'vitest';
import { isWithin, treesOverlap } from '../../../core/workspace/index.js';

describe('isWithin', () => {
  it('holds for the same path and descendants only', () => {
    expect(isWithin('/a/root', '/a/root')).toBe(true);
    expect(isWithin('/a/root/x/y', '/a/root')).toBe(true);
    expect(isWithin('/a/root/', '/a/root')).toBe(true);
    expect(isWithin('/a/root-evil', '/a/root')).toBe(false);
    expect(isWithin('/a', '/a/root')).toBe(false);
    expect(isWithin('/a/root/../other', '/a/root')).toBe(false);
    expect(isWithin('/a/root/..x', '/a/root')).toBe(true);
  });

  it('treats the file system root as containing everything', () => {
    expect(isWithin('/anything/at/all', '/')).toBe(true);
  });
});

describe('treesOverlap', () => {
  it('is true for the same tree, an ancestor or a descendant', () => {
    expect(treesOverlap('/w/a', '/w/a')).toBe(true);
    expect(treesOverlap('/w', '/w/a')).toBe(true);
    expect(treesOverlap('/w/a/b', '/w/a')).toBe(true);
  });

  it('is false for siblings, including prefix-sharing ones', () => {
    expect(treesOverlap('/w/a', '/w/b')).toBe(false);
    expect(treesOverlap('/w/a', '/w/ab')).toBe(false);
  });
});
