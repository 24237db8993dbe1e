import { describe, expect, it } from 'vitest';
import { ClaudeConfigSchema } from '../../adapters/claude-code/config.js';
import { CodexConfigSchema } from '../../adapters/codex/config.js';
import { GeminiConfigSchema } from '../../adapters/acp/config.js';
import { cliSelectionSchema, defaultCliRange } from '../../core/adapter.js';

describe('the shared pieces of an adapter block', () => {
  it('a cli block defaults to the pin and its minor line, and refuses a managed range without the pin', () => {
    const schema = cliSelectionSchema({ binary: 'tool', pin: '1.4.2' });
    expect(schema.parse({})).toEqual({ source: 'managed', version: '1.4.2', range: '>=1.4.0 <1.5.0' });
    expect(defaultCliRange('0.225.2')).toBe('>=0.225.0 <0.226.0');
    const bad = schema.safeParse({ range: '>=2.0.0' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('expected a range that includes the pinned version 1.4.2');
    expect(JSON.stringify(schema.safeParse({ source: 'path' }).error?.issues)).toContain('the absolute path of the tool binary');
  });

  for (const [name, schema] of [
    ['claude-code', ClaudeConfigSchema],
    ['codex', CodexConfigSchema],
    ['gemini', GeminiConfigSchema],
  ] as const) {
    it(`${name}: an endpoint URL with a user or password is refused (it would reach the agent unredacted)`, () => {
      const refused = schema.safeParse({ endpoint: { baseUrl: 'http://user:hunter22@127.0.0.1:8000/v1', apiKey: 'k-123456' } });
      expect(refused.success).toBe(false);
      expect(JSON.stringify(refused.error?.issues)).toContain('a user or password in the URL');
      expect(JSON.stringify(refused.error?.issues)).not.toContain('hunter22');
      expect(schema.safeParse({ endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'k-123456' } }).success).toBe(true);
    });
  }
});
