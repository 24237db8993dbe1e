import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { AcpConfigSchema, DroidAcpBlockSchema, GeminiConfigSchema } from '../../../adapters/acp/index.js';
import { ClaudeConfigSchema } from '../../../adapters/claude-code/config.js';
import { CodexConfigSchema } from '../../../adapters/codex/config.js';
import { DroidConfigSchema, customModelId } from '../../../adapters/droid/config.js';
import { ProcessConfigSchema } from '../../../adapters/process-runner/config.js';
import { collectSecrets, configJsonSchema, createConfigSchema, parseConfigText } from '../../../core/config/index.js';

const EXAMPLE = fileURLToPath(new URL('../../../one-works.yaml.example', import.meta.url));
const schema = createConfigSchema({
  droid: DroidConfigSchema,
  'claude-code': ClaudeConfigSchema,
  codex: CodexConfigSchema,
  'droid-acp': DroidAcpBlockSchema,
  gemini: GeminiConfigSchema,
  acp: AcpConfigSchema,
  process: ProcessConfigSchema,
});
const text = await readFile(EXAMPLE, 'utf8');

type JsonSchema = { properties?: Record<string, JsonSchema>; items?: JsonSchema };

// Every key path the schema declares; list items are addressed as index 0.
function keyPaths(node: JsonSchema, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const path = [...prefix, key];
    out.push(path, ...keyPaths(child, path));
    if (child.items) out.push(...keyPaths(child.items, [...path, 0]));
  }
  return out;
}

describe('one-works.yaml.example', () => {
  it('is valid under the real schema', () => {
    const config = parseConfigText(text, { schema, env: { LOCAL_MODEL_API_KEY: 'sk-local-example' }, file: 'one-works.yaml.example' });
    const droid = config.adapters.droid;
    expect(droid.customModels).toHaveLength(1);
    expect(customModelId(droid.customModels, 0)).toBe('custom:Local-0');
    expect(droid.customModels[0]?.extraHeaders).toEqual({ 'X-Team': 'platform' });
    expect(collectSecrets(schema, config)).toEqual(['sk-local-example', 'platform']);
  });

  it('shows the defaults for the keys it sets to defaults', () => {
    const config = parseConfigText(text, { schema, env: { LOCAL_MODEL_API_KEY: 'k' }, file: 'x' });
    const defaults = parseConfigText('', { schema, env: {}, file: 'x' });
    expect(config.orchestrator).toEqual(defaults.orchestrator);
    expect(config.sandbox).toBe(defaults.sandbox);
    const { customModels: _c, configContent: _cc, env: _e, ...droidRest } = config.adapters.droid;
    const { customModels: _dc, configContent: _dcc, env: _de, ...defaultRest } = defaults.adapters.droid;
    expect(droidRest).toEqual(defaultRest);
  });

  it('documents every key of the schema, set or commented out, each with a comment above it', () => {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter });
    const lines = text.split('\n');
    const problems: string[] = [];
    for (const path of keyPaths(configJsonSchema(schema) as JsonSchema)) {
      const key = String(path.at(-1));
      const keyLine = doc.hasIn(path)
        ? lineOfKey(doc, lineCounter, path)
        : lines.findIndex((line) => new RegExp(`^\\s*#\\s*${key}:`).test(line));
      if (keyLine < 0) problems.push(`${path.join('.')} is not in the example`);
      else if (!/^\s*(- )?#/.test(lines[keyLine - 1] ?? '')) problems.push(`${path.join('.')} has no comment above it`);
    }
    expect(problems).toEqual([]);
  });
});

// 0-based line of the key node at `path` (which must exist).
function lineOfKey(doc: Document, lineCounter: LineCounter, path: Array<string | number>): number {
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  if (!isMap(parent)) return -1;
  const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === path.at(-1));
  const range = isScalar(pair?.key) ? pair.key.range : undefined;
  return range ? lineCounter.linePos(range[0]).line - 1 : -1;
}
