import { describe, expect, it } from 'vitest';
import { createSharedOrchestrator } from '../../../cli/mcp/orchestrator-access.js';
import { ERROR_CODES, OneWorksError } from '../../../core/errors.js';
import { FakeOrchestrator } from './fake-orchestrator.js';

type FakeClient = FakeOrchestrator & { closed: number; close(): Promise<void> };

function fakeClient(): FakeClient {
  const fake = new FakeOrchestrator() as FakeClient;
  fake.closed = 0;
  fake.close = async () => {
    fake.closed += 1;
  };
  return fake;
}

// A client whose server went away: like the control-socket client, every call now fails with
// connection_closed before anything is sent (so none is recorded as reaching the orchestrator).
function serverGone(client: FakeClient): void {
  for (const method of [
    'createSession',
    'sendMessage',
    'cancel',
    'status',
    'list',
    'wait',
    'updateSession',
    'readSession',
    'usage',
    'info',
    'models',
  ] as const) {
    (client as unknown as Record<string, unknown>)[method] = () =>
      Promise.reject(new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, `cannot send ${method}: the connection is closed`));
  }
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

  it('reconnects before the first call after the orchestrator restarted, so that call succeeds and runs once, on the new connection', async () => {
    const made: FakeClient[] = [];
    const shared = createSharedOrchestrator(async () => {
      made.push(fakeClient());
      return made.at(-1)!;
    });
    await shared.use((o) => o.list());
    serverGone(made[0]!);
    const handle = await shared.use((o) => o.createSession({ adapter: 'droid', workspace: '/ws', prompt: 'hi' }));
    expect(handle).toMatchObject({ sessionId: 's-0000000001', runId: 'r1' });
    expect(made).toHaveLength(2);
    expect(made[1]!.calls.map((c) => c.method)).toEqual(['createSession']);
    await expect.poll(() => made[0]!.closed).toBe(1);
    await shared.close();
  });

  it('does not probe a connection it has just made, and passes on a probe failure other than connection_closed without running the call', async () => {
    const made: FakeClient[] = [];
    const shared = createSharedOrchestrator(async () => {
      made.push(fakeClient());
      return made.at(-1)!;
    });
    await shared.use((o) => o.list());
    expect(made[0]!.calls.map((c) => c.method)).toEqual(['list']);
    made[0]!.fail('info', new OneWorksError(ERROR_CODES.REQUEST_TIMEOUT, 'slow'));
    let ran = false;
    await expect(
      shared.use(async (o) => {
        ran = true;
        return o.list();
      }),
    ).rejects.toMatchObject({ code: 'request_timeout' });
    expect(ran).toBe(false);
    expect(made).toHaveLength(1);
    await shared.close();
  });
});
