/**
 * Event pipeline bench: 100,000 native droid notifications (a turn-like mix: text deltas, which
 * are live only, and tool calls, progress, results and messages with fresh ids, which are
 * persisted) written as NDJSON bytes into One Works' real pipeline — stream transport → droid
 * connection (envelope) → projection → EventSink (redaction with a registered secret, dedup,
 * numbering) → FileStore event log — against a bare baseline in the same run: the same bytes
 * split into lines, JSON.parse'd and appended to a file. Printed, never asserted. Rates are given
 * by wall time and by CPU time (the process's user + system time over the same span): on a
 * shared machine the wall figure mostly measures the other tenants.
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
import { median } from './support.js';

export interface PipelineResult {
  notifications: number;
  persistedEvents: number;
  pipelinePerSecond: number;
  baselinePerSecond: number;
  /** Baseline rate over pipeline rate (how many times slower the pipeline is). */
  ratio: number;
  /** The same rates by CPU time (user + system) instead of wall time. */
  pipelineCpuPerSecond: number;
  baselineCpuPerSecond: number;
  cpuRatio: number;
}

interface Timing {
  ms: number;
  cpuMs: number;
}

// Wall and CPU milliseconds since `start` (from `clock()`).
function clock(): Timing {
  const cpu = process.cpuUsage();
  return { ms: performance.now(), cpuMs: (cpu.user + cpu.system) / 1000 };
}
function since(start: Timing): Timing {
  const now = clock();
  return { ms: now.ms - start.ms, cpuMs: now.cpuMs - start.cpuMs };
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
  const pipeline: Timing[] = [];
  const baseline: Timing[] = [];
  let persistedEvents = 0;
  for (let r = 0; r < rounds; r++) {
    const root = await mkdtemp(join(tmpdir(), 'ow-bench-pipeline-'));
    try {
      const run = await runPipeline(root, bytes, count);
      pipeline.push(run);
      persistedEvents = run.persisted;
      baseline.push(await runBaseline(root, bytes));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
  const p = median(pipeline.map((t) => t.ms));
  const b = median(baseline.map((t) => t.ms));
  const pc = median(pipeline.map((t) => t.cpuMs));
  const bc = median(baseline.map((t) => t.cpuMs));
  return {
    notifications: count,
    persistedEvents,
    pipelinePerSecond: (count / p) * 1000,
    baselinePerSecond: (count / b) * 1000,
    ratio: p / b,
    pipelineCpuPerSecond: (count / pc) * 1000,
    baselineCpuPerSecond: (count / bc) * 1000,
    cpuRatio: pc / bc,
  };
}

async function runPipeline(root: string, bytes: Buffer, count: number): Promise<Timing & { persisted: number }> {
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
  const t0 = clock();
  stdout.end(bytes);
  await all;
  await sink.flush();
  const elapsed = since(t0);
  conn.close();
  return { ...elapsed, persisted: (await store.readEvents('s-bench00001')).length };
}

async function runBaseline(root: string, bytes: Buffer): Promise<Timing> {
  const file = join(root, 'baseline.jsonl');
  const t0 = clock();
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
  return since(t0);
}
