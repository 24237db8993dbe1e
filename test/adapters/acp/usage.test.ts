import { describe, expect, it } from 'vitest';
import { promptUsage } from '../../../adapters/acp/project.js';

// A prompt result's usage: ACP's `usage` first; Gemini CLI's `_meta.quota.token_count` only for a
// profile that reads it (`_meta` belongs to each agent); never zeros made up.

const quota = { _meta: { quota: { token_count: { input_tokens: 95, output_tokens: 16 }, model_usage: [] } } };

describe('promptUsage', () => {
  it('reads ACP usage, mapping its field names', () => {
    expect(
      promptUsage({ usage: { inputTokens: 3, outputTokens: 4, thoughtTokens: 2, cachedReadTokens: 1, cachedWriteTokens: null } }),
    ).toEqual({
      reported: true,
      inputTokens: 3,
      outputTokens: 4,
      thinkingTokens: 2,
      cacheReadTokens: 1,
    });
  });

  it("reads Gemini's _meta.quota only when asked, and prefers usage over it", () => {
    expect(promptUsage(quota)).toEqual({ reported: false });
    expect(promptUsage(quota, { metaQuota: true })).toEqual({ reported: true, inputTokens: 95, outputTokens: 16 });
    expect(promptUsage({ ...quota, usage: { inputTokens: 1, outputTokens: 2 } }, { metaQuota: true })).toEqual({
      reported: true,
      inputTokens: 1,
      outputTokens: 2,
    });
  });

  it('a result without counts (a cancelled Gemini turn, droid) is unreported', () => {
    expect(promptUsage({}, { metaQuota: true })).toEqual({ reported: false });
    expect(promptUsage({ _meta: { quota: { token_count: { input_tokens: -1 } } } }, { metaQuota: true })).toEqual({ reported: false });
  });
});
