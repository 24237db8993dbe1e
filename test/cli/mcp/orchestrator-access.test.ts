import { describe, expect, it } from 'vitest';
import { createSharedOrchestrator, type ClosableOrchestrator } from '../../../cli/mcp/orchestrator-access.js';
import { ERROR_CODES, OneWorksError } from '../../../core/errors.js';
import { FakeOrchestrator } from './fake-orchestrator.js';

function fakeClient(): ClosableOrchestrator & { closed: number } {
  const fake = new FakeOrchestrator() as FakeOrchestrator & { closed: number; close(): Promise<void> };
  fake.closed = 0;
  fake.close = async () => {
    fake.closed += 1;
  };
  return fake;
}

describe('createSharedOrchestrator', () => {
  it('connects on first use, shares the connection, and closes it', async () => {
    const made: ReturnType<typeof fakeClient>[] = [];
    const shared = createSharedOrchestrator(async () => {
      made.push(fakeClient());
      return made.at(-1)!;
    });
    expect(made).toHaveLength(0);
    await Promise.all([shared.use((o) => o.list()), shared.use((o) => o.info())]);
    expect(made).toHaveLength(1);
    await shared.close();
    expect(made[0]!.closed).toBe(1);
  });

  it('drops a connection that failed with connection_closed and connects again on the next call, without retrying the failed one', async () => {
    const made: ReturnType<typeof fakeClient>[] = [];
    const shared = createSharedOrchestrator(async () => {
      made.push(fakeClient());
      return made.at(-1)!;
    });
    let calls = 0;
    await expect(
      shared.use(async () => {
        calls += 1;
        throw new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, 'gone');
      }),
    ).rejects.toMatchObject({ code: 'connection_closed' });
    expect(calls).toBe(1);
    await shared.use((o) => o.list());
    expect(made).toHaveLength(2);
    await expect.poll(() => made[0]!.closed).toBe(1);
    await shared.close();
  });

  it('forgets a failed connect so that the next call tries again', async () => {
    let attempts = 0;
    const shared = createSharedOrchestrator(async () => {
      attempts += 1;
      if (attempts === 1) throw new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, 'no server');
      return fakeClient();
    });
    await expect(shared.use((o) => o.list())).rejects.toMatchObject({ code: 'connection_closed' });
    await expect(shared.use((o) => o.list())).resolves.toEqual([]);
    await shared.close();
  });
});
