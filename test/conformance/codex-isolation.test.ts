import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INHERITED_ENV_VARS } from '../../core/process/env.js';
import { CliRigs, RIG_API_KEY, type CliResult } from '../support/one-works-cli.js';
import { findProcesses, processEnv } from '../support/rig-processes.js';
import {
  type ResponsesStep,
  responsesToolOutputs,
  responsesTranscript,
  type ScriptedResponses,
  startScriptedResponses,
} from '../support/scripted-responses.js';

// The real Codex 0.171.0 under One Works: the user's real ~/.codex is never read or touched,
// Codex's state lives in the session HOME (CODEX_HOME, and a TMPDIR beside it), the generated
// config.toml switches the outside lookups off, the codex process holds only allowlisted
// variables, commands it runs do not inherit the key, and the key is absent from everything
// One Works wrote or printed.

const rigs = new CliRigs();
// adapters.codex.credentials.OPENAI_API_KEY defaults to the host's $OPENAI_API_KEY: it crosses to codex, redacted.
const HOST_OPENAI_KEY = 'sk-host-openai-7c1e55';
afterEach(() => rigs.dispose());

async function responses(steps: ResponsesStep[]): Promise<ScriptedResponses> {
  const model = await startScriptedResponses({ steps, pieceSize: 5 });
  rigs.defer(() => model.close());
  return model;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) await walk(p);
      else if (entry.isFile()) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

describe('codex: isolation', () => {
  it('leaves a canary ~/.codex untouched and unread; its state goes to the session HOME', async () => {
    const model = await responses([{ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo isolated' } }] }, { text: 'done' }]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl, autonomy: 'high' } });
    // The user's real Codex state: a config that would send the model elsewhere, and global instructions.
    const userCodex = join(rig.userHome, '.codex');
    await mkdir(userCodex);
    const canaryConfig =
      'model = "canary-model"\nmodel_provider = "canary"\n[model_providers.canary]\nname = "c"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n';
    await writeFile(join(userCodex, 'config.toml'), canaryConfig);
    await writeFile(join(userCodex, 'AGENTS.md'), 'CANARY-INSTRUCTIONS-42');
    const before = await Promise.all(['config.toml', 'AGENTS.md'].map((f) => stat(join(userCodex, f))));

    const result = await rig.run(['run', '-A', 'codex', '--workspace', rig.workspace, 'echo']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed', text: 'done' });
    expect((await rig.readEvents(id!)).find((e) => e.type === 'tool.result')).toMatchObject({ isError: false });

    expect((await readdir(userCodex)).sort()).toEqual(['AGENTS.md', 'config.toml']);
    expect(await readFile(join(userCodex, 'config.toml'), 'utf8')).toBe(canaryConfig);
    const after = await Promise.all(['config.toml', 'AGENTS.md'].map((f) => stat(join(userCodex, f))));
    expect(after.map((s) => s.mtimeMs)).toEqual(before.map((s) => s.mtimeMs));
    expect(await readdir(rig.userHome)).toEqual(['.codex']);
    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps.map((r) => (r.body as { model?: string }).model)).toEqual(['scripted-model', 'scripted-model']);
    expect(JSON.stringify(steps[0]!.body)).not.toContain('CANARY-INSTRUCTIONS-42');

    // Codex's state went to the session HOME: its thread rollout under CODEX_HOME, the sandbox lock under its TMPDIR.
    const home = rig.sessionHome(id!);
    expect((await filesUnder(join(home, '.codex', 'sessions'))).some((f) => f.endsWith('.jsonl'))).toBe(true);
    expect(await readdir(join(home, '.codex-tmp'))).toContain('.keep');
    // The generated config: loopback endpoint, outside lookups off, no secret.
    const config = await readFile(join(home, '.codex', 'config.toml'), 'utf8');
    expect(config).toContain(`base_url = "${model.baseUrl}"`);
    expect(config).toContain('wire_api = "responses"');
    for (const line of [
      'check_for_update_on_startup = false',
      '[features]\nplugins = false',
      '[analytics]\nenabled = false',
      '[feedback]\nenabled = false',
      'exporter = "none"',
    ]) {
      expect(config).toContain(line);
    }
    expect(config).not.toContain(RIG_API_KEY);
  });

  it('the codex process holds only allowlisted variables, its commands not the key, and the key is absent from everything One Works wrote or printed', async () => {
    let childEnv: Record<string, string> | undefined;
    let rigRoot = '';
    const sampleEnv = (): void => {
      const codex = findProcesses(rigRoot).find((p) => p.args.endsWith(' app-server'));
      if (codex) childEnv = processEnv(codex.pid);
    };
    const model = await responses([
      () => {
        sampleEnv();
        return {
          text: `Echoing the key: ${RIG_API_KEY}.`,
          toolCalls: [
            { name: 'exec_command', arguments: { cmd: 'echo "[$ONE_WORKS_CODEX_API_KEY][$OPENAI_API_KEY]"' }, callId: 'call_env_1' },
          ],
        };
      },
      (request) => ({
        text: `The tool said ${responsesToolOutputs(request)[0]?.output.split('Output:\n')[1]?.trim()} and the header was ${String(request.headers.authorization)}`,
      }),
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl, autonomy: 'high' } });
    rigRoot = rig.root;
    const outputs: CliResult[] = [];
    outputs.push(
      await rig.run(['run', '-A', 'codex', '--workspace', rig.workspace, 'print the key'], {
        env: { HOST_SECRET_NOT_ALLOWED: 'host-secret-value', OPENAI_API_KEY: HOST_OPENAI_KEY },
      }),
    );
    expect(outputs[0]!.exitCode, outputs[0]!.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed' });
    const steps = model.requests.filter((r) => r.kind === 'step');
    // The model really got the key as the bearer token (so the test would notice a leak)…
    expect(steps[0]!.headers.authorization).toBe(`Bearer ${RIG_API_KEY}`);
    // …but the command Codex ran inherited neither it nor the OpenAI key (a credential that crosses to codex when set).
    expect(responsesToolOutputs(steps[1]!)[0]!.output).toContain('[][]');
    expect(responsesTranscript(steps[1]!)).not.toContain(HOST_OPENAI_KEY);

    expect(childEnv, 'the codex process was sampled during the turn').toBeDefined();
    const allowed = new Set<string>([
      ...INHERITED_ENV_VARS,
      'HOME',
      'XDG_CONFIG_HOME',
      'XDG_CACHE_HOME',
      'XDG_DATA_HOME',
      'XDG_STATE_HOME',
      'CODEX_HOME',
      'ONE_WORKS_CODEX_API_KEY',
      'OPENAI_API_KEY',
    ]);
    expect(Object.keys(childEnv!).filter((name) => !allowed.has(name))).toEqual([]);
    const home = rig.sessionHome(id!);
    expect(childEnv!).toMatchObject({ HOME: home, CODEX_HOME: join(home, '.codex'), TMPDIR: join(home, '.codex-tmp') });
    expect(childEnv!.OPENAI_API_KEY).toBe(HOST_OPENAI_KEY);
    expect(childEnv!.HOST_SECRET_NOT_ALLOWED).toBeUndefined();

    // Everything One Works wrote (state minus Codex's own files in the session HOME, plus the config it generated) and printed.
    outputs.push(await rig.run(['events', id!]));
    outputs.push(await rig.run(['--json', 'sessions', 'show', id!]));
    const codexOwn = (f: string): boolean => f.startsWith(`${home}/.codex/`) || f.startsWith(`${home}/.codex-tmp/`);
    await rig.untilNoServer();
    const written = [...(await filesUnder(rig.stateDir)).filter((f) => !codexOwn(f)), join(home, '.codex', 'config.toml')];
    const haystacks = [
      ...(await Promise.all(written.map(async (f) => ({ where: f, text: await readFile(f, 'latin1') })))),
      ...outputs.flatMap((o, n) => [
        { where: `stdout ${n}`, text: o.stdout },
        { where: `stderr ${n}`, text: o.stderr },
      ]),
    ];
    const encoded = [RIG_API_KEY, HOST_OPENAI_KEY].flatMap((key) => [key, encodeURIComponent(key), Buffer.from(key).toString('base64')]);
    expect(haystacks.filter((h) => encoded.some((e) => h.text.includes(e))).map((h) => h.where)).toEqual([]);
    expect(written.some((f) => f.endsWith('events.jsonl'))).toBe(true);
    // The redacted answer is there, so the scan looked at real content.
    expect(outputs[0]!.stdout).toContain('and the header was Bearer');
  });
});
