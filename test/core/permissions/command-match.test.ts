import { describe, expect, it } from 'vitest';
import {
  findDenyMatch,
  findUnallowedSegment,
  matchesPrefix,
  normaliseCommand,
  redirectTargets,
  splitCommandSegments,
} from '../../../core/permissions/command-match.js';
import { rememberKey } from '../../../core/permissions/index.js';
import { exec } from './ask-builders.js';

describe('normaliseCommand', () => {
  it('collapses spaces and tabs but keeps line breaks, which separate commands', () => {
    expect(normaliseCommand('  npm \t test  ')).toBe('npm test');
    expect(normaliseCommand('make a \n\n  rm  b ')).toBe('make a\nrm b');
  });

  it('gives a two-line command a different remember key than the one-line lookalike', () => {
    expect(rememberKey(exec('make\nclean'))).not.toBe(rememberKey(exec('make clean')));
  });
});

describe('splitCommandSegments', () => {
  it('splits on chains, pipes, background, subshells and substitutions', () => {
    expect(splitCommandSegments('a && b || c; d | e |& f & g\nh $(i) `j` <(k) (l)')).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
      'f',
      'g',
      'h',
      'i',
      'j',
      'k',
      'l',
    ]);
  });

  it('keeps descriptor copies and &> redirects inside their segment', () => {
    expect(splitCommandSegments('npm test 2>&1 | tee log &> out')).toEqual(['npm test 2>&1', 'tee log &> out']);
  });
});

describe('matchesPrefix', () => {
  it.each([
    ['npm test', 'npm test', true],
    ['npm test -- -t x', 'npm test', true],
    ['npm   test', ' npm test ', true],
    ['npm testify', 'npm test', false],
    ['npm', 'npm test', false],
    ['anything', '   ', false],
  ])('%j against prefix %j → %s', (text, prefix, expected) => {
    expect(matchesPrefix(text, prefix)).toBe(expected);
  });
});

describe('findDenyMatch and findUnallowedSegment', () => {
  it('reports which segment matched which deny entry', () => {
    expect(findDenyMatch('npm test && sudo -n git push', ['git push'])).toEqual({
      segment: 'sudo -n git push',
      prefix: 'git push',
    });
    expect(findDenyMatch('git status', ['git push'])).toBeUndefined();
  });

  it('reports the first segment that no allow entry covers', () => {
    expect(findUnallowedSegment('npm test && make && npm test', ['npm test'])).toBe('make');
    expect(findUnallowedSegment('npm test | npm test', ['npm test'])).toBeUndefined();
    expect(findUnallowedSegment(' ; ', ['npm test'])).toBe(';');
  });
});

describe('redirectTargets', () => {
  it('lists files written through >, >>, >| and &>, not descriptor copies', () => {
    expect(redirectTargets('a > x 2>&1 && b >> "y" ; c >| z && d &> w && e >&2')).toEqual({
      targets: ['x', 'y', 'z', 'w'],
      changesDirectory: false,
    });
  });

  it('notices a directory change, which makes relative targets unknowable', () => {
    expect(redirectTargets('cd /tmp && echo x > f').changesDirectory).toBe(true);
    expect(redirectTargets('echo cd > f').changesDirectory).toBe(false);
  });

  it('records a redirect with no target as an empty target', () => {
    expect(redirectTargets('echo >').targets).toEqual(['']);
  });
});
