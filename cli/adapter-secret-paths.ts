import type { SecretPath } from '../core/config/secret-paths.js';

/**
 * Where each adapter block of the config holds secrets (core/config/secret-paths.ts), written out
 * from the blocks' schemas, so that a command that reads no adapter block (`sessions`, `events`, …:
 * createContext's `adapters: false`) registers their secrets with its redactor without building
 * those schemas (LoadConfigOptions.deferredBlocks). test/cli/adapter-secret-paths.test.ts fails,
 * printing the table to put here, when a schema's secrets change.
 */
export const ADAPTER_SECRET_PATHS: Readonly<Record<string, readonly SecretPath[]>> = {
  droid: [
    { path: ['customModels', '*', 'apiKey'] },
    { path: ['customModels', '*', 'extraHeaders', '*'] },
    { path: ['credentials', 'FACTORY_API_KEY'], env: 'FACTORY_API_KEY' },
    { path: ['credentials', 'FACTORY_TOKEN'], env: 'FACTORY_TOKEN' },
    { path: ['mcpServers', '*', 'env', '*'] },
    { path: ['mcpServers', '*', 'headers', '*'] },
  ],
  'claude-code': [
    { path: ['credentials', 'ANTHROPIC_API_KEY'], env: 'ANTHROPIC_API_KEY' },
    { path: ['credentials', 'ANTHROPIC_AUTH_TOKEN'], env: 'ANTHROPIC_AUTH_TOKEN' },
    { path: ['credentials', 'CLAUDE_CODE_OAUTH_TOKEN'], env: 'CLAUDE_CODE_OAUTH_TOKEN' },
    { path: ['endpoint', 'apiKey'] },
    { path: ['mcpServers', '*', 'env', '*'] },
    { path: ['mcpServers', '*', 'headers', '*'] },
  ],
  codex: [
    { path: ['credentials', 'OPENAI_API_KEY'], env: 'OPENAI_API_KEY' },
    { path: ['credentials', 'CODEX_API_KEY'], env: 'CODEX_API_KEY' },
    { path: ['endpoint', 'apiKey'] },
  ],
  process: [{ path: ['harnesses', '*', 'provider', 'apiKey'] }, { path: ['harnesses', '*', 'mcpServers', '*', 'env', '*'] }],
  'droid-acp': [],
  gemini: [
    { path: ['credentials', 'GEMINI_API_KEY'], env: 'GEMINI_API_KEY' },
    { path: ['credentials', 'GOOGLE_API_KEY'], env: 'GOOGLE_API_KEY' },
    { path: ['endpoint', 'apiKey'] },
  ],
  acp: [{ path: ['agents', '*', 'mcpServers', '*', 'env', '*'] }, { path: ['agents', '*', 'mcpServers', '*', 'headers', '*'] }],
};
