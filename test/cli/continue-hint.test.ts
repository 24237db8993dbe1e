import { describe, expect, it } from 'vitest';
import { continueHint } from '../../cli/commands/run-follow.js';

describe('the continue hint after a run', () => {
  it('names --config when the config file is not the one found by default in this directory', () => {
    expect(continueHint({ cwd: '/work', configPath: '/tmp/demo/one-works.yaml' }, 's-0123456789')).toBe(
      'one-works --config /tmp/demo/one-works.yaml send s-0123456789 "…"',
    );
    expect(continueHint({ cwd: '/tmp/my demo', configPath: "/tmp/my demo/it's.yaml" }, 's-1')).toBe(
      `one-works --config '/tmp/my demo/it'\\''s.yaml' send s-1 "…"`,
    );
  });

  it('leaves --config out when this directory finds the same file, or there is none', () => {
    expect(continueHint({ cwd: '/work', configPath: '/work/one-works.yaml' }, 's-1')).toBe('one-works send s-1 "…"');
    expect(continueHint({ cwd: '/work', configPath: undefined }, 's-1')).toBe('one-works send s-1 "…"');
  });
});
