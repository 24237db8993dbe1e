import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createFileStore } from '../../../core/store/index.js';
import { describeStoreConformance } from './store-conformance.js';
import { tempState } from './store-helpers.js';

describeStoreConformance({
  name: 'file',
  open: async () => {
    const { stateDir, cleanup } = await tempState();
    const store = await createFileStore(stateDir, { followPollMs: 10 });
    return {
      store,
      reopen: () => createFileStore(stateDir, { followPollMs: 10 }),
      putRawRecord: async (sessionId, value) => {
        const dir = path.join(stateDir, 'sessions', sessionId);
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, 'session.json'), JSON.stringify(value));
      },
      cleanup,
    };
  },
});

// The same promises with the reads of a short reading command (`sessions`, `events`): one synchronous call per file.
describeStoreConformance({
  name: 'file, synchronous reads',
  open: async () => {
    const { stateDir, cleanup } = await tempState();
    const store = await createFileStore(stateDir, { followPollMs: 10, syncReads: true });
    return {
      store,
      reopen: () => createFileStore(stateDir, { followPollMs: 10, syncReads: true }),
      putRawRecord: async (sessionId, value) => {
        const dir = path.join(stateDir, 'sessions', sessionId);
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, 'session.json'), JSON.stringify(value));
      },
      cleanup,
    };
  },
});
