import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';

type JsonSchema = { properties?: Record<string, JsonSchema>; [key: string]: unknown };

let box: CliSandbox;
let printed: string;
let exitCode: number;

beforeAll(async () => {
  box = await createCliSandbox();
  const result = await box.run(['config', 'schema']);
  printed = result.stdout;
  exitCode = result.exitCode;
}, CLI_TEST_TIMEOUT_MS);
afterAll(async () => {
  await box.remove();
});

describe('one-works config schema', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('prints a draft 2020-12 JSON Schema and exits 0', () => {
    expect(exitCode).toBe(0);
    const schema = JSON.parse(printed) as JsonSchema;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
  });

  it('describes adapters.droid.cli with its sources and pin', () => {
    const schema = JSON.parse(printed) as JsonSchema;
    const cli = schema.properties?.adapters?.properties?.droid?.properties?.cli;
    expect(cli?.properties?.source).toMatchObject({ enum: ['managed', 'system', 'path'], default: 'managed' });
    expect(cli?.properties?.version).toMatchObject({ type: 'string', default: '0.225.2' });
    expect(Object.keys(cli?.properties ?? {})).toEqual(['source', 'version', 'path', 'range']);
  });

  it('is a schema a validator can use: it accepts a good config and rejects bad keys and values', () => {
    const validator = z.fromJSONSchema(JSON.parse(printed) as Parameters<typeof z.fromJSONSchema>[0]);
    const good = {
      workspaces: { approved: ['/srv/app'] },
      adapters: { droid: { cli: { source: 'path', path: '/opt/droid', version: '0.225.2' }, effort: 'max' } },
    };
    expect(validator.safeParse(good).success).toBe(true);
    expect(validator.safeParse({ adapters: { droid: { effort: 'ultra' } } }).success).toBe(false);
    expect(validator.safeParse({ adapters: { droid: { cli: { source: 'brew' } } } }).success).toBe(false);
    expect(validator.safeParse({ adapters: { droid: { modle: 'x' } } }).success).toBe(false);
  });
});
