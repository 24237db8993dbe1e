import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../../cli/mcp/tools.js';
import { renderToolsDoc, TOOLS_DOC_PATH } from '../../../cli/mcp/tools-doc.js';

describe('docs/TOOLS.md', () => {
  it('is what cli/mcp/tools-doc.ts generates from the registered schemas (run `npx tsx cli/mcp/tools-doc.ts` when this fails)', async () => {
    expect(await readFile(TOOLS_DOC_PATH, 'utf8')).toBe(renderToolsDoc());
  });

  it('documents every registered tool and every input field', () => {
    const doc = renderToolsDoc();
    for (const tool of MCP_TOOLS) {
      expect(doc).toContain(`## ${tool.name}\n`);
      for (const field of Object.keys(tool.input.shape)) expect(doc).toContain(`| \`${field}\` |`);
    }
  });
});
