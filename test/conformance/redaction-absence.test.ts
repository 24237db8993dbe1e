import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, RIG_API_KEY, type CliResult } from '../support/one-works-cli.js';

// Every secret One Works injects must be absent from every byte it writes or prints: the state
// directory (records, event logs, the settings it composes), the cache, stdout and stderr — in
// sessions where the model echoes the secrets (split across streamed deltas) and a tool prints
// them raw, URL-encoded and base64-encoded. The agent's own files inside the session HOME
// (droid's transcripts and logs under home/.factory, written by droid, not by One Works) are the
// one exception, listed explicitly below.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

const FACTORY_API_KEY = 'fk-canary-api-key-5e1d7c9b3a';
const FACTORY_TOKEN = 'ftok/canary+token=8c2f4e6a0b';
const SECRETS = { RIG_API_KEY, FACTORY_API_KEY, FACTORY_TOKEN };

function encodings(secret: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64'),
    Buffer.from(`user:${secret}`).toString('base64'),
    Buffer.from(`x-api:${secret}`).toString('base64'),
  ];
}

// Files droid itself writes inside the session HOME: its transcripts, logs, caches and env files.
function isAgentOwned(path: string): boolean {
  return /\/home\/\.factory\/(sessions|logs|cache|temp|state|telemetry|snapshots|host\.json|droids|bin)/.test(path);
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

describe('secrets never reach what One Works writes or prints', () => {
  it('after a session in which the model echoes them and a tool prints them', async () => {
    const model = await rigs.model({
      textPieceSize: 5,
      steps: [
        {
          text: `Echoing the key: ${FACTORY_API_KEY} and the token ${FACTORY_TOKEN}.`,
          toolCalls: [
            {
              id: 'redact_call_1',
              name: 'Execute',
              arguments: {
                command:
                  'echo "$FACTORY_API_KEY"; echo "$FACTORY_TOKEN"; printf "user:%s" "$FACTORY_API_KEY" | base64 -w0; echo; ' +
                  'node -e "console.log(encodeURIComponent(process.env.FACTORY_TOKEN))"',
                riskLevel: 'low',
                riskLevelReason: 'prints variables',
              },
            },
          ],
        },
        (request) => ({
          text: `The model server saw: ${String(request.headers.authorization)} and base64 ${Buffer.from(`user:${RIG_API_KEY}`).toString('base64')}`,
        }),
        { text: `Second turn repeats ${RIG_API_KEY} and ${encodeURIComponent(FACTORY_TOKEN)}.` },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const env = { FACTORY_API_KEY, FACTORY_TOKEN };
    const outputs: CliResult[] = [];
    const run = async (args: string[]): Promise<CliResult> => {
      const result = await rig.run(args, { env });
      outputs.push(result);
      return result;
    };

    const first = await run(['run', '--workspace', rig.workspace, 'print the secrets']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const second = await run(['send', id!, 'again']);
    expect(second.exitCode, second.stderr).toBe(0);
    await run(['--json', 'run', '--workspace', rig.workspace, 'once more, as json']);
    await run(['sessions', 'show', id!]);
    await run(['--json', 'events', id!]);
    await run(['events', id!]);
    await run(['config', 'check']);
    await run(['--json', 'config', 'check']);

    // The secrets really were in play: the tool printed the injected credentials (redacted in the
    // record) and the model server received the BYOK key as a bearer token.
    const events = await rig.readEvents(id!);
    const result = events.find((e) => e.type === 'tool.result');
    expect(result && 'output' in result ? result.output : '').toContain('[REDACTED]');
    expect(model.requests.some((r) => r.headers.authorization === `Bearer ${RIG_API_KEY}`)).toBe(true);
    expect(first.stdout).toContain('[REDACTED]');

    await rig.untilNoServer();
    const written = (await filesUnder(rig.stateDir)).filter((p) => !isAgentOwned(p));
    written.push(...(await filesUnder(process.env.ONE_WORKS_TEST_CACHE!)).filter((p) => p.includes('/catalog/')));
    // The settings One Works composes into the session HOME are checked too.
    expect(written.some((p) => p.endsWith('/home/.factory/settings.json'))).toBe(true);
    expect(written.some((p) => p.endsWith('events.jsonl'))).toBe(true);

    const leaks: string[] = [];
    for (const [name, secret] of Object.entries(SECRETS)) {
      for (const form of encodings(secret)) {
        for (const file of written) {
          if ((await stat(file)).size > 50 * 1024 * 1024) continue;
          if ((await readFile(file)).includes(form)) leaks.push(`${name} (${form}) in ${relative(rig.root, file)}`);
        }
        outputs.forEach((o, i) => {
          if (o.stdout.includes(form)) leaks.push(`${name} (${form}) in stdout of command ${i}`);
          if (o.stderr.includes(form)) leaks.push(`${name} (${form}) in stderr of command ${i}`);
        });
      }
    }
    expect(leaks).toEqual([]);
  });
});
