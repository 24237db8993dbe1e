/**
 * Memory per idle recorded session on One Works' side: the heap an orchestrator keeps for each
 * session it has loaded (its slot, record and book) once the session is idle, measured in its own
 * process after full collections. `node --import tsx test/bench/memory.ts` prints it as JSON.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createOrchestrator } from '../../core/orchestrator/index.js';
import { createFileStore } from '../../core/store/index.js';

type Gc = () => void;

function collector(): Gc {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Gc;
}

/** Heap bytes per idle session loaded by an orchestrator (`sessions` records with one completed run each). */
export async function idleSessionBytes(sessions = 2000): Promise<number> {
  const gc = collector();
  const root = await mkdtemp(join(tmpdir(), 'ow-bench-memory-'));
  try {
    const store = await createFileStore(join(root, 'state'));
    const now = new Date().toISOString();
    const ids = Array.from({ length: sessions }, (_, i) => `s-${String(i).padStart(10, '0')}`);
    for (const id of ids) {
      await store.writeSession({
        id,
        adapter: 'droid',
        workspace: root,
        createdAt: now,
        updatedAt: now,
        status: 'idle',
        nativeSessionId: `native-${id}`,
        runs: [
          {
            id: 'r1',
            prompt: 'hello',
            autonomy: 'low',
            status: 'completed',
            reason: 'completed',
            text: 'hi',
            startedAt: now,
            endedAt: now,
          },
        ],
      });
    }
    const orchestrator = await createOrchestrator({
      store,
      stateDir: join(root, 'state'),
      limits: { maxConcurrentRuns: 4, maxQueuedTotal: 64, maxQueuedPerSession: 8, cancelGraceMs: 1000, runTimeoutMs: 60_000 },
      approvedRoots: [root],
      defaultsFor: () => ({ autonomy: 'low' }),
      runtimeFor: () => Promise.reject(new Error('no turn runs in this bench')),
    });
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    for (const id of ids) await orchestrator.status(id);
    gc();
    gc();
    const bytes = (process.memoryUsage().heapUsed - before) / sessions;
    if ((await orchestrator.list()).length !== sessions) throw new Error('bench orchestrator lost sessions');
    await orchestrator.shutdown();
    return bytes;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${JSON.stringify({ idleSessionBytes: await idleSessionBytes() })}\n`);
}
