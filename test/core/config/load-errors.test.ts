import { describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { createConfigSchema, parseConfigText } from '../../../core/config/index.js';
import { OneWorksError } from '../../../core/errors.js';

const schema = createConfigSchema({ droid: DroidConfigSchema });

// The config_invalid error for `text`, or a failure when it parses.
function errorOf(text: string, env: Record<string, string> = {}): OneWorksError {
  try {
    parseConfigText(text, { schema, env, file: 'one-works.yaml' });
  } catch (error) {
    expect(error).toBeInstanceOf(OneWorksError);
    expect((error as OneWorksError).code).toBe('config_invalid');
    return error as OneWorksError;
  }
  throw new Error('expected the config to be rejected');
}

const lines = (...parts: string[]): string => `${parts.join('\n')}\n`;

describe('config errors name file:line:col, the key path and the expectation', () => {
  it('reports a YAML syntax error with its position', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    effort: [high', 'sandbox: none'));
    expect(error.message).toMatch(/^one-works\.yaml:4:1: YAML syntax error: Flow sequence .*end with a \]$/);
  });

  it('reports a bad indentation with the line it is on', () => {
    const error = errorOf(lines('workspaces:', '  approved: []', '   extra: 1'));
    expect(error.message).toBe('one-works.yaml:3:1: YAML syntax error: All mapping items must start at the same column');
  });

  it('reports a duplicated key', () => {
    const error = errorOf(lines('sandbox: none', 'sandbox: bwrap'));
    expect(error.message).toBe('one-works.yaml:2:1: YAML syntax error: Map keys must be unique');
  });

  it('points at an unknown key and suggests the closest known one', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    model: inherit', '    efort: high'));
    expect(error.message).toBe('one-works.yaml:4:5: adapters.droid.efort: unknown key; did you mean "effort"?');
  });

  it('lists the known keys when no key is close', () => {
    const error = errorOf(lines('orchestrator:', '  zzz: 1'));
    expect(error.message).toBe(
      'one-works.yaml:2:3: orchestrator.zzz: unknown key; expected one of maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession, cancelGraceMs, runTimeoutMs, idleExitMs, askTimeoutMs, keepWarmMs, maxWarmAgents, maxWarmMemoryMb, prewarm, fleetMaxConcurrentRuns, workerLeaseMs',
    );
  });

  it('rejects an unknown effort listing the accepted values', () => {
    const error = errorOf(lines('# comment', 'adapters:', '  droid:', '    effort: ultra'));
    expect(error.message).toBe('one-works.yaml:4:13: adapters.droid.effort: expected one of low|medium|high|xhigh|max, got "ultra"');
  });

  it('reports a wrong type with what was found', () => {
    const error = errorOf(lines('orchestrator:', '  maxConcurrentRuns: lots'));
    expect(error.message).toBe('one-works.yaml:2:22: orchestrator.maxConcurrentRuns: expected a number, got "lots"');
  });

  it('reports a number out of range', () => {
    const error = errorOf(lines('orchestrator:', '  maxConcurrentRuns: 65'));
    expect(error.message).toBe('one-works.yaml:2:22: orchestrator.maxConcurrentRuns: expected a number <= 64, got 65');
  });

  it('rejects a pin that is not an exact semver version', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    cli:', '      version: ^0.225.0'));
    expect(error.message).toBe(
      'one-works.yaml:4:16: adapters.droid.cli.version: expected an exact semver version such as 0.225.2, got "^0.225.0" (a range belongs in cli.range)',
    );
  });

  it('rejects an invalid range', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    cli:', '      range: ">=banana"'));
    expect(error.message).toBe(
      'one-works.yaml:4:14: adapters.droid.cli.range: expected a valid semver range such as ">=0.225.0 <0.226.0", got ">=banana"',
    );
  });

  it('rejects a managed range that excludes the pin', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    cli:', '      range: ">=0.226.0"'));
    expect(error.message).toBe(
      'one-works.yaml:4:14: adapters.droid.cli.range: expected a range that includes the pinned version 0.225.2, got ">=0.226.0"',
    );
  });

  it('rejects a relative path where an absolute one is required', () => {
    const error = errorOf(lines('workspaces:', '  approved:', '    - /ok', '    - src/project'));
    expect(error.message).toBe('one-works.yaml:4:7: workspaces.approved[1]: expected an absolute path, got "src/project"');
  });

  it('explains that ~ is not expanded', () => {
    const error = errorOf(lines('state:', '  directory: ~/state'));
    expect(error.message).toBe(
      'one-works.yaml:2:14: state.directory: expected an absolute path, got "~/state" (~ is not expanded; write the full path)',
    );
  });

  it('rejects cli.path with source managed', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    cli:', '      source: managed', '      path: /usr/bin/droid'));
    expect(error.message).toBe(
      'one-works.yaml:5:13: adapters.droid.cli.path: only allowed when source is "path" (source is "managed"); set source: path or remove this key',
    );
  });

  it('requires cli.path with source path, pointing at the cli block', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    cli:', '      source: path'));
    expect(error.message).toBe(
      'one-works.yaml:4:7: adapters.droid.cli.path: required when source is "path": the absolute path of the droid binary',
    );
  });

  it('reports a missing required key inside a list entry', () => {
    const text = lines('adapters:', '  droid:', '    customModels:', '      - model: m', '        apiKey: k', '        provider: openai');
    const error = errorOf(text);
    expect(error.message).toBe('one-works.yaml:4:9: adapters.droid.customModels[0].baseUrl: missing required key (expected a string)');
  });

  it('never prints the value found at a secret position', () => {
    const text = lines(
      'adapters:',
      '  droid:',
      '    customModels:',
      '      - model: m',
      '        baseUrl: http://127.0.0.1:1/v1',
      '        provider: openai',
      '        apiKey: 123456789',
    );
    const error = errorOf(text);
    expect(error.message).toBe('one-works.yaml:7:17: adapters.droid.customModels[0].apiKey: expected a string, got ***');
    expect(JSON.stringify(error.data)).not.toContain('123456789');
  });

  it('names an unset variable and its position', () => {
    const error = errorOf(lines('adapters:', '  droid:', '    model: ${ONE_WORKS_TEST_MODEL}'));
    expect(error.message).toBe(
      'one-works.yaml:3:12: adapters.droid.model: environment variable ONE_WORKS_TEST_MODEL is not set; set it, or write ${ONE_WORKS_TEST_MODEL:-default}',
    );
  });

  it('lists several problems, one per line, in file order, without a stack', () => {
    const text = lines('sandbox: docker', 'adapters:', '  droid:', '    autonomy: full', '    effort: ultra', 'extra: 1');
    const error = errorOf(text);
    expect(error.message.split('\n')).toEqual([
      'one-works.yaml:1:10: sandbox: expected one of none|bwrap, got "docker"',
      'one-works.yaml:4:15: adapters.droid.autonomy: expected one of off|low|medium|high, got "full"',
      'one-works.yaml:5:13: adapters.droid.effort: expected one of low|medium|high|xhigh|max, got "ultra"',
      'one-works.yaml:6:1: extra: unknown key; expected one of state, cache, workspaces, orchestrator, sandbox, defaults, adapters',
    ]);
    expect(error.message).not.toMatch(/\n\s+at /);
    expect(error.data?.file).toBe('one-works.yaml');
  });

  it('rejects a top level that is not a mapping', () => {
    const error = errorOf(lines('- a', '- b'));
    expect(error.message).toBe('one-works.yaml:1:1: expected a mapping, got a list');
  });
});
