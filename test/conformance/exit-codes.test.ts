import { chmod, open, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect } from '../../cli/daemon/client.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { MAX_PROMPT_LENGTH } from '../../core/orchestrator/index.js';
import { isOneWorksError } from '../../core/errors.js';
import { CliRigs } from '../support/one-works-cli.js';

// Exit codes through the real `one-works` binary, with the real droid behind the orchestrator:
// an empty or whitespace-only prompt is a usage error (2) for run and send, and the control
// socket refuses it and a prompt over 200,000 characters with `usage`; `mcp --http` on a port
// in use is a usage error (2), not an internal one (70); a full disk (ENOSPC) while `send`
// records its turn is a state directory problem (6).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// Writes to `file` until the file system is full.
async function fillUp(file: string): Promise<void> {
  const handle = await open(file, 'w');
  try {
    for (;;) await handle.write(Buffer.alloc(4096, 1));
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    await handle.close();
  }
}

describe('exit codes say what went wrong', () => {
  it('empty prompts, the socket prompt cap, a port in use and a full disk', async () => {
    const model = await rigs.model({ steps: [{ text: 'first' }, { text: 'never' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const first = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();

    // Empty and whitespace-only prompts: exit 2 before anything is submitted.
    for (const args of [
      ['run', '--workspace', rig.workspace, ''],
      ['run', '--workspace', rig.workspace, ' \n\t '],
      ['send', id!, '   '],
      ['submit', '--workspace', rig.workspace, '\n'],
    ]) {
      const result = await rig.run(args);
      expect(result.exitCode, `${args[0]} ${JSON.stringify(args.at(-1))}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain('one-works: the prompt is empty; say what the agent should do');
    }
    expect((await rig.readSession(id!)).runs).toHaveLength(1);

    // The control socket: its own clients get `usage` for an empty or oversized prompt. A server
    // started by hand, once the one the first `run` started has idled out (its socket would answer
    // the wait below, then close).
    await rig.untilNoServer();
    const server = rig.start(['serve']);
    let client = await tryConnect(socketPath(rig.stateDir));
    for (let i = 0; client === undefined && i < 100; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client = await tryConnect(socketPath(rig.stateDir));
    }
    expect(client).toBeDefined();
    try {
      const refusals = await Promise.all([
        client!.sendMessage({ sessionId: id!, prompt: 'x'.repeat(MAX_PROMPT_LENGTH + 1) }).catch((e: unknown) => e),
        client!.sendMessage({ sessionId: id!, prompt: ' \t' }).catch((e: unknown) => e),
        client!.createSession({ adapter: 'droid', workspace: rig.workspace, prompt: '' }).catch((e: unknown) => e),
      ]);
      for (const refusal of refusals) expect(isOneWorksError(refusal, 'usage'), String(refusal)).toBe(true);
      expect(String((refusals[0] as Error).message)).toContain(`a prompt is at most ${MAX_PROMPT_LENGTH} characters (this one has 200001)`);
    } finally {
      await client!.close();
      server.kill('SIGTERM');
      // Its exit status is not the subject here (dispose sweeps whatever is left).
      await server.result.catch(() => undefined);
    }
    expect((await rig.readSession(id!)).runs).toHaveLength(1);

    // A port in use: exit 2 naming the address.
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const tokenFile = join(rig.root, 'mcp-token');
      await writeFile(tokenFile, `${'t'.repeat(40)}\n`);
      await chmod(tokenFile, 0o600);
      const mcp = await rig.run(['mcp', '--http', `127.0.0.1:${port}`, '--token-file', tokenFile]);
      expect(mcp.exitCode, mcp.stderr).toBe(2);
      expect(mcp.stderr).toContain(`cannot serve MCP on 127.0.0.1:${port}: the port is already in use (EADDRINUSE)`);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }

    // A full disk: the session's folder becomes a small tmpfs (its files copied in) that is then
    // filled up, so reads work and writing its record or its event log fails with ENOSPC.
    // (Mounting needs root, as the bwrap tests do.)
    const folder = join(rig.stateDir, 'sessions', id!);
    const saved = join(rig.root, 'saved-session');
    await execa('cp', ['-a', folder, saved]);
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', folder]);
    try {
      await execa('cp', ['-a', `${saved}/.`, folder]);
      await fillUp(join(folder, 'filler'));
      const send = await rig.run(['send', id!, 'next']);
      expect(send.exitCode, send.stderr).toBe(6);
      expect(send.stderr).toMatch(new RegExp(`cannot write ${folder}/[^ ]+: the disk is full \\(ENOSPC\\)`));
      expect(send.stderr).not.toContain('internal error');
    } finally {
      // Lazily: the auto-started orchestrator may still hold the log open until it exits.
      await execa('umount', ['-l', folder]);
    }
  });
});
