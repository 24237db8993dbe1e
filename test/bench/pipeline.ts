/**
 * Event pipeline bench: 100,000 native droid notifications (a turn-like mix: text deltas, which
 * are live only, and tool calls, progress, results and messages with fresh ids, which are
 * persisted) written as NDJSON bytes into One Works' real pipeline — stream transport → droid
 * connection (envelope) → projection → EventSink (redaction with a registered secret, dedup,
 * numbering) → FileStore event log — against a bare baseline in the same run: the same bytes
 * split into lines, JSON.parse'd and appended to a file. Printed, never asserted.
 */
import { mkdtemp, rm, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createDroidEnvelope } from '../../adapters/droid/envelope.js';
import { DROID_METHODS } from '../../adapters/droid/methods.js';
import { createDroidProjector } from '../../adapters/droid/project.js';
import { createConnection } from '../../core/protocol/index.js';
import { Redactor } from '../../core/redact.js';
import { EventSink } from '../../core/session/event-sink.js';
import { createFileStore } from '../../core/store/index.js';
import { createStreamTransport } from '../../core/transport/index.js';

export interface PipelineResult {
  notifications: number;
  persistedEvents: number;
  pipelinePerSecond: number;
  baselinePerSecond: number;
  /** Baseline rate over pipeline rate (how many times slower the pipeline is). */
  ratio: number;
}

const SECRET = 'sk-pipeline-secret-0123456789';

// Notification i of the mix: 6 in 10 are text deltas, the rest tool facts and messages with fresh ids.
function notification(i: number): Record<string, unknown> {
  const turn = Math.floor(i / 10);
  const kind = i % 10;
  const tool = `t${turn}`;
  const body: Record<string, unknown> =
    kind < 6
      ? { type: 'assistant_text_delta', messageId: `m${turn}`, blockIndex: 0, textDelta: `word ${i} ` }
      : kind === 6
        ? { type: 'tool_call', toolUse: { type: 'tool_use', id: tool, name: 'Execute', input: { command: `echo ${i}` } } }
        : kind === 7
          ? {
              type: 'tool_progress_update',
              toolUseId: tool,
              toolName: 'Execute',
              update: { type: 'status', text: `line ${i}`, timestamp: i },
            }
          : kind === 8
            ? { type: 'tool_result', toolUseId: tool, messageId: `r${turn}`, content: `out ${i} ${SECRET}`, isError: false }
            : {
                type: 'create_message',
                message: { id: `m${turn}`, role: 'assistant', content: [{ type: 'text', text: `reply ${turn}` }] },
              };
  return {
    jsonrpc: '2.0',
    type: 'notification',
    factoryApiVersion: '1.0.0',
    factoryProtocolVersion: '1.220.0',
    method: DROID_METHODS.sessionNotification,
    params: { sessionId: 'native-1', notification: body },
  };
}

/** Runs both sides `rounds` times over `count` notifications and returns the medians. */
export async function benchPipeline(count = 100_000, rounds = 3): Promise<PipelineResult> {
  const bytes = Buffer.from(Array.from({ length: count }, (_, i) => `${JSON.stringify(notification(i))}\n`).join(''));
  const pipeline: number[] = [];
  const baseline: number[] = [];
  let persistedEvents = 0;
  for (let r = 0; r < rounds; r++) {
    const root = await mkdtemp(join(tmpdir(), 'ow-bench-pipeline-'));
    try {
      const run = await runPipeline(root, bytes, count);
      pipeline.push(run.ms);
      persistedEvents = run.persisted;
      baseline.push(await runBaseline(root, bytes));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
  const p = median(pipeline);
  const b = median(baseline);
  return {
    notifications: count,
    persistedEvents,
    pipelinePerSecond: (count / p) * 1000,
    baselinePerSecond: (count / b) * 1000,
    ratio: p / b,
  };
}

async function runPipeline(root: string, bytes: Buffer, count: number): Promise<{ ms: number; persisted: number }> {
  const store = await createFileStore(join(root, 'state'));
  const redactor = new Redactor();
  redactor.register(SECRET);
  const sink = new EventSink({
    sessionId: 's-bench00001',
    target: { append: (events) => store.appendEvents('s-bench00001', events) },
    redactor,
    seenKeys: [],
    lastSeq: 0,
  });
  const stdout = new PassThrough();
  const stdin = new PassThrough();
  stdin.resume();
  const conn = createConnection(
    createStreamTransport(stdout, stdin, { maxLineBytes: 16 * 2 ** 20 }),
    createDroidEnvelope({ protocolVersion: '1.220.0' }),
    {},
  );
  const projector = createDroidProjector({ workspace: root, manualTitle: false });
  projector.beginTurn('u1');
  let seen = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  conn.onNotification((_method, params) => {
    for (const draft of projector.project(params)) sink.emit(draft);
    if (++seen === count) done();
  });
  await conn.start();
  const t0 = performance.now();
  stdout.end(bytes);
  await all;
  await sink.flush();
  const ms = performance.now() - t0;
  conn.close();
  return { ms, persisted: (await store.readEvents('s-bench00001')).length };
}

async function runBaseline(root: string, bytes: Buffer): Promise<number> {
  const file = join(root, 'baseline.jsonl');
  const t0 = performance.now();
  const text = bytes.toString('utf8');
  let batch: string[] = [];
  let start = 0;
  for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
    batch.push(JSON.stringify(JSON.parse(text.slice(start, end))));
    start = end + 1;
    if (batch.length === 1000) {
      await appendFile(file, `${batch.join('\n')}\n`);
      batch = [];
    }
  }
  if (batch.length > 0) await appendFile(file, `${batch.join('\n')}\n`);
  return performance.now() - t0;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
