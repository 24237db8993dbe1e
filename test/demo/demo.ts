/**
 * `npm run demo`: the main job, end to end, on a fresh machine with no Factory login.
 *
 * 1. The managed droid CLI is installed from the npm registry by One Works' own installer
 *    (with progress; cached in $XDG_CACHE_HOME/one-works for later runs).
 * 2. A temporary approved workspace and a one-works.yaml are created.
 * 3. A SCRIPTED model server on 127.0.0.1 stands in for the LLM, declared to droid as a BYOK
 *    custom model. Its replies are fixed in this file; everything else is real: the real droid
 *    binary runs a real turn, executes a real tool in the workspace, and One Works records it.
 * 4. `one-works run` starts the orchestrator in the background (its log is
 *    <state>/orchestrator.log), submits the turn to it and streams the live view; the demo then
 *    prints where the session's record and events are, and stops the orchestrator so that
 *    nothing is left running.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { droidCustomModel, startScriptedModel } from '../support/scripted-model.js';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));

async function main(): Promise<number> {
  const root = await mkdtemp(join(tmpdir(), 'one-works-demo-'));
  const workspace = join(root, 'workspace');
  await mkdir(workspace);
  await writeFile(join(workspace, 'README.md'), '# demo project\n\nA file for the agent to look at.\n');

  const model = await startScriptedModel({
    steps: [
      {
        text: 'I will look at the workspace and leave a note.',
        toolCalls: [
          {
            id: 'demo_call_1',
            name: 'Execute',
            arguments: {
              command: 'ls -la && wc -l README.md && echo "hello from droid, run by One Works" > NOTE.txt && cat NOTE.txt',
              riskLevel: 'low',
              riskLevelReason: 'lists files and writes one note in the workspace',
            },
          },
        ],
      },
      { text: 'Done: the workspace has a README.md, and I wrote NOTE.txt with a greeting.' },
    ],
  });
  try {
    const { entry, modelId } = droidCustomModel(model.baseUrl, { displayName: 'Scripted', apiKey: 'sk-demo-not-a-real-key' });
    const configPath = join(root, 'one-works.yaml');
    await writeFile(
      configPath,
      [
        '# Written by `npm run demo`. The model is a scripted local server, not a real LLM.',
        `state: { directory: ${join(root, 'state')} }`,
        'orchestrator: { idleExitMs: 2000 }   # the background orchestrator exits soon after its last client',
        `workspaces: { approved: [${workspace}] }`,
        'adapters:',
        '  droid:',
        '    cli: { source: managed, version: 0.225.2 }',
        `    model: "${modelId}"`,
        '    autonomy: low',
        '    policy: { allow: [ls -la, wc -l, echo, cat] }   # droid asks before every command; these the policy allows',
        '    env: { FACTORY_AIRGAP_ENABLED: "true" }   # only loopback connections: no Factory servers needed',
        '    customModels:',
        `      - ${JSON.stringify(entry)}`,
        '',
      ].join('\n'),
    );

    say('One Works demo');
    say('  The model in this demo is SCRIPTED: a local server on 127.0.0.1 that replies with fixed');
    say('  text and one tool call. The droid CLI, its tool execution, the sandbox and the records');
    say('  are real.');
    say(`  workspace: ${workspace}`);
    say('');
    const run = await execa(
      BIN,
      // --no-hint: a `continue: one-works send …` would fail once the demo's model server is gone.
      [
        '--config',
        configPath,
        'run',
        '--no-hint',
        '--workspace',
        workspace,
        '--title',
        'demo',
        'Look around the workspace and leave a note.',
      ],
      {
        stdio: 'inherit',
        reject: false,
        cwd: root,
      },
    );
    say('');
    await stopOrchestrator(join(root, 'state'));
    const note = await readFile(join(workspace, 'NOTE.txt'), 'utf8').catch(() => undefined);
    say(note ? `The tool really ran: ${join(workspace, 'NOTE.txt')} says "${note.trim()}"` : 'NOTE.txt was not written.');
    say(`Config: ${configPath}`);
    say(`Inspect: ${BIN} --config ${configPath} sessions list`);
    say('');
    say('The real thing: with a Factory key,  FACTORY_API_KEY=… npx one-works run "…"');
    say('or declare your own BYOK model under adapters.droid.customModels in one-works.yaml.');
    return run.exitCode ?? 1;
  } finally {
    await model.close();
  }
}

// Stops the orchestrator `run` started (SIGTERM, as a user would), waiting until it is gone.
async function stopOrchestrator(stateDir: string): Promise<void> {
  const owner = await readFile(join(stateDir, 'owner.json'), 'utf8').catch(() => undefined);
  const pid = owner === undefined ? undefined : (JSON.parse(owner) as { pid?: number }).pid;
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let waited = 0; waited < 20_000; waited += 100) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

process.exitCode = await main();
