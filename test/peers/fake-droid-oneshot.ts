import { appendFileSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { FakeDroidConfig } from './fake-droid-config.js';
import { defaultSettings, readSession, writeSession, zeroUsage } from './fake-droid-store.js';
import type { FakeSession } from './fake-droid-store.js';

// Reads `--flag value` from argv.
function flag(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
}

// Flags of `droid exec` that take a value (the prompt is the one positional argument left).
const VALUED = new Set([
  '-o',
  '--output-format',
  '-f',
  '--file',
  '--cwd',
  '-m',
  '--model',
  '-r',
  '--reasoning-effort',
  '-s',
  '--session-id',
  '--auto',
  '--only-tools',
]);

function positionalPrompt(argv: string[]): string | undefined {
  for (let index = 1; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (VALUED.has(arg)) index += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/**
 * `droid exec --output-format json [--session-id ID] (-f FILE | PROMPT)`, as droid 0.225.2 plays
 * it: one turn, then one result line on stdout and exit 0. The fake runs no tools: the reply is
 * `FAKE_DROID_REPLY`. A `--session-id` it does not find (or any, with the `oneshot-no-resume`
 * fault: droid offline cannot fetch a session from Factory's servers) exits 1 with no output, as
 * the real CLI does offline. `oneshot-fails` exits 1 with a failure result. Every run is recorded
 * in `FAKE_DROID_RECORD` as `{"oneshot": {args, prompt}}`.
 */
export function runOneShot(config: FakeDroidConfig, argv: string[]): void {
  const file = flag(argv, '-f') ?? flag(argv, '--file');
  const prompt = file === undefined ? positionalPrompt(argv) : readFileSync(file, 'utf8');
  if (config.recordPath !== undefined) appendFileSync(config.recordPath, `${JSON.stringify({ oneshot: { args: argv, prompt } })}\n`);
  if (prompt === undefined || prompt.trim() === '') {
    process.stderr.write('Error: No prompt provided\n');
    process.exit(1);
  }
  if (config.faults.has('oneshot-hang')) {
    setInterval(() => undefined, 1 << 30);
    return;
  }
  const resumeId = flag(argv, '--session-id') ?? flag(argv, '-s');
  let session: FakeSession | undefined;
  if (resumeId !== undefined) {
    session = config.faults.has('oneshot-no-resume') ? undefined : readSession(resumeId);
    if (session === undefined) process.exit(1);
  }
  const cwd = flag(argv, '--cwd') ?? process.cwd();
  session ??= { sessionId: randomUUID(), cwd, settings: defaultSettings(), messages: [], tokenUsage: zeroUsage(), updatedAt: Date.now() };
  const model = flag(argv, '-m');
  if (model !== undefined) session.settings.modelId = model;
  const now = Date.now();
  const userId = randomUUID();
  session.messages.push({ id: userId, role: 'user', content: [{ type: 'text', text: prompt }], createdAt: now, updatedAt: now });
  const failed = config.faults.has('oneshot-fails');
  const result = failed ? 'Error: the fake model failed (FAKE_DROID_FAULT=oneshot-fails)' : config.reply;
  if (!failed) {
    session.messages.push({
      id: randomUUID(),
      role: 'assistant',
      content: [{ type: 'text', text: result }],
      createdAt: now,
      updatedAt: now,
      parentId: userId,
    });
  }
  writeSession(session);
  const usage = { input_tokens: 60, output_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, factory_credits: 0 };
  const line = {
    type: 'result',
    subtype: failed ? 'failure' : 'success',
    is_error: failed,
    duration_ms: 5,
    num_turns: 1,
    result,
    session_id: session.sessionId,
    usage,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`, () => process.exit(failed ? 1 : 0));
}
