/**
 * A fake `droid` CLI speaking the stream-jsonrpc wire protocol of droid 0.225.2 well enough for
 * session, turn and fault tests. Run it as
 * `node --import tsx test/peers/fake-droid.ts exec --input-format stream-jsonrpc --output-format stream-jsonrpc --cwd <dir>`
 * or through the `test/peers/fake-droid` shell wrapper. `--version` prints `FAKE_DROID_VERSION`.
 * `exec --output-format json … PROMPT` plays droid's one-shot mode (fake-droid-oneshot.ts).
 * Behaviour and faults come from `FAKE_DROID_*` variables (see fake-droid-config.ts).
 */
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { readFakeDroidConfig } from './fake-droid-config.js';
import type { FakeDroidConfig } from './fake-droid-config.js';
import { runOneShot } from './fake-droid-oneshot.js';
import { FakeDroid } from './fake-droid-server.js';
import { FakeWire, parseInbound } from './fake-droid-wire.js';

const USAGE =
  'usage: fake-droid --version | fake-droid exec --input-format stream-jsonrpc --output-format stream-jsonrpc --cwd <dir> | fake-droid exec --output-format json [--session-id <id>] (-f <file> | <prompt>)\n';

// Reads `--flag value` from argv.
function flag(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
}

function fail(message: string): never {
  process.stderr.write(`fake-droid: ${message}\n${USAGE}`);
  process.exit(2);
}

function serve(config: FakeDroidConfig): void {
  if (config.faults.has('die-at-start')) {
    process.stderr.write('fake-droid: dying at start (FAKE_DROID_FAULT=die-at-start)\n');
    process.exit(1);
  }
  const wire = new FakeWire(config);
  const droid = new FakeDroid(wire, config);
  // Faults that make a peer that will not go away by itself: only SIGKILL ends it.
  const stubborn = config.faults.has('ignore-sigterm') || config.faults.has('silence');
  if (config.faults.has('ignore-sigterm')) process.on('SIGTERM', () => undefined);
  if (stubborn) setInterval(() => undefined, 1 << 30);

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (config.recordPath !== undefined) appendFileSync(config.recordPath, `${line}\n`);
    if (line.trim() === '') return;
    const parsed = parseInbound(line);
    if ('error' in parsed) {
      wire.respond(null, { error: parsed.error });
      return;
    }
    droid.handle(parsed.frame);
    if (droid.closing) {
      // close_session: droid answers `{}` and then exits by itself.
      void droid.idle().then(() => setTimeout(() => process.exit(0), 50));
    }
  });
  // stdin EOF does not abort a running turn: droid finishes it, then exits 0.
  lines.on('close', () => {
    if (!stubborn) void droid.idle().then(() => process.exit(0));
  });
}

function main(argv: string[]): void {
  let config: FakeDroidConfig;
  try {
    config = readFakeDroidConfig(process.env);
  } catch (error) {
    fail((error as Error).message);
  }
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${config.version}\n`);
    return;
  }
  if (argv[0] !== 'exec') fail(`unsupported command: ${argv.join(' ') || '(none)'}`);
  if (flag(argv, '--output-format') === 'json' && flag(argv, '--input-format') === undefined) {
    runOneShot(config, argv);
    return;
  }
  if (flag(argv, '--input-format') !== 'stream-jsonrpc' || flag(argv, '--output-format') !== 'stream-jsonrpc') {
    fail('only --input-format stream-jsonrpc --output-format stream-jsonrpc is simulated');
  }
  serve(config);
}

main(process.argv.slice(2));
