import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createContext } from '../../cli/context.js';
import { connectOrchestrator } from '../../cli/daemon/client.js';
import { environmentFingerprint } from '../../cli/daemon/fingerprint.js';
import { DEFERRED_CA_CERTS_VAR } from '../../core/install/index.js';
import { useDaemonRoots } from '../support/daemon-roots.js';
import { findProcesses } from '../support/rig-processes.js';

// A real `one-works serve --auto`, started by the client as users get it, with NODE_EXTRA_CA_CERTS
// set: its start does not parse the file (Node reads it only at a process's start), yet it runs
// with the variable as the user set it. No session runs here, so no agent is needed.

const CERT = fileURLToPath(new URL('../fixtures/tls/loopback-test-only.crt', import.meta.url));
const { clients, makeRoot } = useDaemonRoots('ow-daemon-ca-');

// The environment a process started with (/proc/<pid>/environ: what exec gave it, not later changes).
function startEnvironment(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

describe('an auto-started orchestrator and NODE_EXTRA_CA_CERTS', () => {
  it('starts without the variable (deferred), then runs with it: its fingerprint matches a client that has it', async () => {
    const { root, ctx } = await makeRoot({ idleExitMs: 5_000, env: { NODE_EXTRA_CA_CERTS: CERT } });
    // An adapter block that lets the variable through to its agents: the server reads it from its own
    // environment, so it is part of the fingerprint a client compares.
    const config = {
      state: { directory: ctx.stateDir },
      workspaces: { approved: [path.join(root, 'ws')] },
      orchestrator: { idleExitMs: 5_000 },
      adapters: { 'claude-code': { passEnv: ['NODE_EXTRA_CA_CERTS'] } },
    };
    await writeFile(ctx.configPath!, stringify(config));
    const client = await connectOrchestrator(ctx, { autoStart: true });
    clients.push(client);
    const hello = client.greeting ?? (await client.hello());

    let server: number | undefined;
    while (server === undefined) {
      server = findProcesses(root).find((p) => / serve( |$)/.test(p.args))?.pid;
      if (server === undefined) await sleep(50);
    }
    const started = startEnvironment(server);
    expect(started.has('NODE_EXTRA_CA_CERTS')).toBe(false);
    expect(started.get(DEFERRED_CA_CERTS_VAR)).toBe(CERT);

    const own = await createContext({ config: ctx.configPath! }, ctx.env, { adapters: 'lazy' });
    expect(hello.fingerprint).toBe(environmentFingerprint(own));
    // The variable counts in that fingerprint: without it, a client would not match this server.
    const { NODE_EXTRA_CA_CERTS: _cert, ...without } = ctx.env;
    const other = await createContext({ config: ctx.configPath! }, without, { adapters: 'lazy' });
    expect(environmentFingerprint(other)).not.toBe(hello.fingerprint);
  }, 60_000);
});
