import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { configJsonSchema, createConfigSchema, parseConfigText } from '../../../core/config/index.js';
import { adapterBlockSchema } from '../../../core/config/schema.js';
import { OneWorksError } from '../../../core/errors.js';

// A second, minimal adapter: the policy key is added to every block, not just droid's.
const EchoConfigSchema = z.strictObject({ greeting: z.string().default('hi') });
const schema = createConfigSchema({ droid: DroidConfigSchema, echo: EchoConfigSchema });

const lines = (...parts: string[]): string => `${parts.join('\n')}\n`;
const parse = (text: string) => parseConfigText(text, { schema, env: {}, file: 'one-works.yaml' });

function errorOf(text: string): string {
  try {
    parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(OneWorksError);
    expect((error as OneWorksError).code).toBe('config_invalid');
    return (error as OneWorksError).message;
  }
  throw new Error('expected the config to be rejected');
}

describe('adapters.<name>.policy', () => {
  it('is accepted by every adapter block, with the unset lists defaulted', () => {
    const config = parse(
      lines(
        'adapters:',
        '  droid:',
        '    policy:',
        '      allow: [npm test]',
        '      deny: [git push]',
        '  echo:',
        '    policy:',
        '      denyPaths: [/etc]',
      ),
    );
    expect(config.adapters.droid.policy).toEqual({ allow: ['npm test'], deny: ['git push'], denyPaths: [], writeBoundary: [] });
    expect(config.adapters.echo).toEqual({ greeting: 'hi', policy: { allow: [], deny: [], denyPaths: ['/etc'], writeBoundary: [] } });
  });

  it('is absent when not written (the empty policy)', () => {
    const config = parse('');
    expect(config.adapters.droid.policy).toBeUndefined();
    expect(config.adapters.echo).toEqual({ greeting: 'hi' });
  });

  it('rejects a chain in an allow entry at its position', () => {
    expect(errorOf(lines('adapters:', '  droid:', '    policy:', '      allow:', '        - npm test && rm -rf /'))).toBe(
      "one-works.yaml:5:11: adapters.droid.policy.allow[0]: allow entries match one command at a time; split chains such as 'a && b' into separate entries",
    );
  });

  it('suggests the closest key for a misspelt policy key', () => {
    expect(errorOf(lines('adapters:', '  echo:', '    policy:', '      denyPath: [/etc]'))).toBe(
      'one-works.yaml:4:7: adapters.echo.policy.denyPath: unknown key; did you mean "denyPaths"?',
    );
    expect(errorOf(lines('adapters:', '  droid:', '    polcy: {}'))).toBe(
      'one-works.yaml:3:5: adapters.droid.polcy: unknown key; did you mean "policy"?',
    );
  });

  it('requires absolute paths in denyPaths and writeBoundary', () => {
    expect(errorOf(lines('adapters:', '  droid:', '    policy:', '      writeBoundary: [tmp/scratch]'))).toBe(
      'one-works.yaml:4:23: adapters.droid.policy.writeBoundary[0]: must be an absolute path',
    );
  });

  it('appears in the exported JSON Schema of each block', () => {
    type Json = { properties?: Record<string, Json> };
    const json = configJsonSchema(schema) as Json;
    for (const name of ['droid', 'echo']) {
      const policy = json.properties?.adapters?.properties?.[name]?.properties?.policy;
      expect(Object.keys(policy?.properties ?? {})).toEqual(['allow', 'deny', 'denyPaths', 'writeBoundary']);
    }
  });
});

describe('adapterBlockSchema', () => {
  it('validates a parsed block again, policy included (e.g. after merging flags)', () => {
    const block = adapterBlockSchema('echo', EchoConfigSchema);
    expect(block.parse({ greeting: 'yo', policy: { allow: ['make'] } })).toEqual({
      greeting: 'yo',
      policy: { allow: ['make'], deny: [], denyPaths: [], writeBoundary: [] },
    });
    expect(block.safeParse({ policy: { allow: ['a; b'] } }).success).toBe(false);
  });

  it('refuses adapter schemas that are not objects or that declare policy themselves', () => {
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (error) {
        return (error as OneWorksError).code;
      }
      return undefined;
    };
    expect(code(() => adapterBlockSchema('odd', z.string()))).toBe('internal');
    expect(code(() => adapterBlockSchema('own', z.strictObject({ policy: z.string() })))).toBe('internal');
    expect(code(() => createConfigSchema({ odd: z.array(z.string()) }))).toBe('internal');
  });
});
