import { watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { conformanceValue, createCliSandbox, processesReferring, type CliRun, type CliSandbox } from '../support/cli-runner.js';

let box: CliSandbox;

beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-cli-probe-', privateTmp: true });
});
afterEach(async () => {
  await box.remove();
});

interface ObservedRun {
  result: CliRun;
  /** Names created in the CLI's TMPDIR while it ran. */
  created: string[];
  /** Pids of droid processes seen working in the sandbox while the CLI ran (sampled). */
  droids: number[];
}

// Runs the CLI while watching its TMPDIR (the probe's throwaway HOME lives there) and sampling
// the processes that refer to the sandbox, so the leftovers check afterwards is not vacuous.
async function observe(args: string[], binary: string): Promise<ObservedRun> {
  const created = new Set<string>();
  const seen = new Set<number>();
  const watcher = watch(box.tmp, (_event, name) => {
    if (name) created.add(name.toString());
  });
  const sampler = setInterval(() => {
    for (const found of processesReferring(box.tmp)) if (found.args.startsWith(binary)) seen.add(found.pid);
  }, 100);
  try {
    const result = await box.run(args);
    return { result, created: [...created], droids: [...seen] };
  } finally {
    clearInterval(sampler);
    watcher.close();
  }
}

async function expectNothingLeft(run: ObservedRun): Promise<void> {
  expect(run.created.some((name) => name.startsWith('one-works-probe-'))).toBe(true);
  expect((await readdir(box.tmp)).filter((name) => name.startsWith('one-works-'))).toEqual([]);
  expect(processesReferring(box.root)).toEqual([]);
  for (const pid of run.droids) expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
}

describe.each([
  { version: '0.225.2', protocol: '1.220.0' },
  { version: '0.215.0', protocol: '1.206.0' },
])('adapters probe of the managed droid $version', ({ version, protocol }) => {
  const cache = (): string => conformanceValue('ONE_WORKS_TEST_CACHE');
  const binary = (): string => join(cache(), 'cli', 'droid', version, 'bin', 'droid');
  const writeConfig = () =>
    box.writeConfig(
      [
        'cache:',
        `  directory: ${cache()}`,
        'adapters:',
        '  droid:',
        '    cli:',
        '      source: managed',
        `      version: ${version}`,
        '',
      ].join('\n'),
    );

  it(`prints the announced protocol ${protocol} and "match", leaving no process and no throwaway HOME`, async () => {
    await writeConfig();
    const run = await observe(['adapters', 'probe'], binary());
    expect(run.result.exitCode).toBe(0);
    expect(run.result.stdout.split('\n')).toEqual([
      `droid ${version} (managed) at ${binary()}`,
      `  announced: apiVersion 1.0.0, protocolVersion ${protocol}`,
      `  expected:  apiVersion 1.0.0, protocolVersion ${protocol} (qualified)`,
      '  match',
    ]);
    await expectNothingLeft(run);
  });

  it('prints one JSON object with --json', async () => {
    await writeConfig();
    const run = await observe(['--json', 'adapters', 'probe'], binary());
    expect(run.result.exitCode).toBe(0);
    expect(run.result.stdout.split('\n')).toHaveLength(1);
    expect(JSON.parse(run.result.stdout)).toMatchObject({
      adapter: 'droid',
      source: 'managed',
      path: binary(),
      version,
      facts: { apiVersion: '1.0.0', protocolVersion: protocol },
      status: 'qualified',
      announced: { apiVersion: '1.0.0', protocolVersion: protocol },
      ok: true,
      problems: [],
    });
    await expectNothingLeft(run);
  });
});
