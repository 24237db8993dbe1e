import { describe, expect, it } from 'vitest';
import { interpolate } from '../../../core/config/index.js';

describe('interpolate', () => {
  it('substitutes set variables, several per string', () => {
    expect(interpolate('${A}-${B}', { A: 'x', B: 'y' })).toEqual({ ok: true, value: 'x-y' });
  });

  it('substitutes a set but empty variable as empty', () => {
    expect(interpolate('[${A}]', { A: '' })).toEqual({ ok: true, value: '[]' });
  });

  it('fails on an unset variable, naming it but not other values', () => {
    expect(interpolate('${SET} ${MISSING}', { SET: 'secret-value' })).toEqual({
      ok: false,
      message: 'environment variable MISSING is not set; set it, or write ${MISSING:-default}',
    });
  });

  it('uses the default when the variable is unset or empty, and the value otherwise', () => {
    expect(interpolate('${A:-fallback}', {})).toEqual({ ok: true, value: 'fallback' });
    expect(interpolate('${A:-fallback}', { A: '' })).toEqual({ ok: true, value: 'fallback' });
    expect(interpolate('${A:-fallback}', { A: 'set' })).toEqual({ ok: true, value: 'set' });
    expect(interpolate('${A:-}', {})).toEqual({ ok: true, value: '' });
    expect(interpolate('${A:-x:-y}', {})).toEqual({ ok: true, value: 'x:-y' });
  });

  it('turns $${ into a literal ${ without looking the name up', () => {
    expect(interpolate('$${HOME} and ${A}', { A: 'a' })).toEqual({ ok: true, value: '${HOME} and a' });
  });

  it('leaves plain dollars alone', () => {
    expect(interpolate('cost: $5, $HOME, $$', {})).toEqual({ ok: true, value: 'cost: $5, $HOME, $$' });
  });

  it('rejects malformed references', () => {
    for (const text of ['${}', '${1A}', '${A-b}', 'x ${A']) {
      const result = interpolate(text, { A: 'a' });
      expect(result.ok, text).toBe(false);
      if (!result.ok)
        expect(result.message).toMatch(
          /^invalid reference "\$\{.*": write \$\{NAME\} or \$\{NAME:-default\}, or \$\$\{ for a literal \$\{$/,
        );
    }
  });
});
