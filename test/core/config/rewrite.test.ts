import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { setYamlValue, setYamlValueInText } from '../../../core/config/index.js';
import { isOneWorksError } from '../../../core/errors.js';

const ORIGINAL = `# One Works config for the team   
# (second header line)

workspaces:
  approved: [ /srv/a,   /srv/b ]   # flow style, odd spacing

adapters:
  droid:
    # pin comment
    cli:
      source: managed      # aligned comment
      version: 0.225.1     # the pin
      range: '>=0.225.0 <0.226.0'
    model: "custom:Local-0"

    effort: high
sandbox: none # trailing
`;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'one-works-rewrite-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('setYamlValue', () => {
  it('changes only the target scalar: every other byte, comment and spacing stays', async () => {
    const file = join(dir, 'one-works.yaml');
    await writeFile(file, ORIGINAL);
    await setYamlValue(file, ['adapters', 'droid', 'cli', 'version'], '0.225.2');
    const after = await readFile(file, 'utf8');
    expect(after).toBe(ORIGINAL.replace('version: 0.225.1 ', 'version: 0.225.2 '));
  });

  it('keeps the quoting style of the scalar it replaces', () => {
    const single = setYamlValueInText(ORIGINAL, ['adapters', 'droid', 'cli', 'range'], '>=0.225.0 <0.227.0');
    expect(single).toBe(ORIGINAL.replace("'>=0.225.0 <0.226.0'", "'>=0.225.0 <0.227.0'"));
    const double = setYamlValueInText(ORIGINAL, ['adapters', 'droid', 'model'], 'custom:Other-1');
    expect(double).toBe(ORIGINAL.replace('"custom:Local-0"', '"custom:Other-1"'));
  });

  it('quotes a plain scalar when the new value would not survive unquoted', () => {
    const after = setYamlValueInText(ORIGINAL, ['sandbox'], 'a: b # c');
    expect(after).toBe(ORIGINAL.replace('sandbox: none #', 'sandbox: "a: b # c" #'));
    expect((parse(after) as { sandbox: string }).sandbox).toBe('a: b # c');
  });

  it('appends missing keys to the deepest existing map, leaving every other byte alone', () => {
    const top = setYamlValueInText(ORIGINAL, ['orchestrator', 'maxConcurrentRuns'], 8);
    expect(top).toBe(`${ORIGINAL}orchestrator:\n  maxConcurrentRuns: 8\n`);
    const nested = setYamlValueInText(ORIGINAL, ['adapters', 'droid', 'cli', 'path'], '/opt/droid');
    expect(nested).toBe(ORIGINAL.replace("0.226.0'\n", "0.226.0'\n      path: /opt/droid\n"));
  });

  it("adds a key to a map inside a list entry at that entry's indentation", () => {
    const text = 'models:\n  - name: a # first\n  - name: b\n';
    expect(setYamlValueInText(text, ['models', 0, 'id'], 'x')).toBe('models:\n  - name: a # first\n    id: x\n  - name: b\n');
  });

  it('falls back to the Document API through a flow map, keeping comments and data', () => {
    const text = '# head\nadapters: { droid: { model: inherit } } # flow\nsandbox: none\n';
    const after = setYamlValueInText(text, ['adapters', 'droid', 'effort'], 'low');
    expect(parse(after)).toEqual({ adapters: { droid: { model: 'inherit', effort: 'low' } }, sandbox: 'none' });
    expect(after).toContain('# head');
    expect(after).toContain('# flow');
  });

  it('fills an empty block (`key:` with no value)', () => {
    const after = setYamlValueInText('# header\nadapters:\n  droid:\n', ['adapters', 'droid', 'cli', 'version'], '0.225.2');
    expect(parse(after)).toEqual({ adapters: { droid: { cli: { version: '0.225.2' } } } });
    expect(after.startsWith('# header\n')).toBe(true);
  });

  it('creates a missing file', async () => {
    const file = join(dir, 'new.yaml');
    await setYamlValue(file, ['adapters', 'droid', 'cli', 'version'], '0.225.2');
    expect(parse(await readFile(file, 'utf8'))).toEqual({ adapters: { droid: { cli: { version: '0.225.2' } } } });
  });

  it('keeps the file mode and leaves no temporary file behind', async () => {
    const file = join(dir, 'one-works.yaml');
    await writeFile(file, ORIGINAL);
    await chmod(file, 0o600);
    await setYamlValue(file, ['sandbox'], 'bwrap');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['one-works.yaml']);
  });

  it('refuses a path through a value that is not a mapping', () => {
    let caught: unknown;
    try {
      setYamlValueInText(ORIGINAL, ['sandbox', 'kind'], 'x');
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'config_invalid')).toBe(true);
    expect((caught as Error).message).toBe(
      'one-works.yaml: sandbox.kind: cannot set this key: a key on its path holds a value that is not a mapping',
    );
  });

  it('refuses to rewrite a file that is not valid YAML', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(file, 'a: [1\nb: 2\n');
    const error = await setYamlValue(file, ['a'], 1).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'config_invalid')).toBe(true);
    expect((error as Error).message).toMatch(/^.*broken\.yaml:2:1: YAML syntax error: /);
    expect(await readFile(file, 'utf8')).toBe('a: [1\nb: 2\n');
  });
});
