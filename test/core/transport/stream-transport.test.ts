import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isOneWorksError, type OneWorksError } from '../../../core/errors.js';
import { createStreamTransport } from '../../../core/transport/stream-transport.js';
import type { Transport } from '../../../core/transport/transport.js';

// A transport over two PassThroughs, recording what it reports.
function setup(options: { maxLineBytes?: number; highWaterMark?: number } = {}) {
  const input = new PassThrough();
  const output = new PassThrough(options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark });
  const transport = createStreamTransport(input, output, options);
  const messages: unknown[] = [];
  const errors: OneWorksError[] = [];
  let closes = 0;
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  transport.onclose = () => {
    closes += 1;
  };
  return { input, output, transport, messages, errors, closes: () => closes };
}

// Resolves once the transport reports its close.
function closed(transport: Transport): Promise<void> {
  const previous = transport.onclose;
  return new Promise((resolve) => {
    transport.onclose = () => {
      previous?.();
      resolve();
    };
  });
}

describe('createStreamTransport: reading', () => {
  it('delivers messages in order, including ones split across chunks', async () => {
    const { input, transport, messages } = setup();
    await transport.start();
    input.write('{"n":1}\n{"n"');
    input.write(':2}\n');
    await tick();
    expect(messages).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('reports a malformed line through onerror and keeps reading', async () => {
    const { input, transport, messages, errors } = setup();
    await transport.start();
    input.write('not json\n{"ok":1}\n');
    await tick();
    expect(messages).toEqual([{ ok: 1 }]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.code).toBe('protocol_error');
    expect(errors[0]?.data).toMatchObject({ line: 'not json', reason: expect.stringMatching(/invalid JSON/) });
  });

  it('reports an oversized line with a truncated copy and reads the next line', async () => {
    const { input, transport, messages, errors } = setup({ maxLineBytes: 1024 });
    await transport.start();
    input.write(`{"big":"${'b'.repeat(4096)}"}\n{"after":true}\n`);
    await tick();
    expect(messages).toEqual([{ after: true }]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.code).toBe('protocol_error');
    const data = errors[0]?.data as { line: string; reason: string };
    expect(data.reason).toMatch(/maxLineBytes/);
    expect(data.line.length).toBeLessThan(300);
  });

  it('keeps messages that arrive before onmessage is set', async () => {
    const input = new PassThrough();
    const transport = createStreamTransport(input, new PassThrough());
    await transport.start();
    input.write('{"early":1}\n');
    await tick();
    const seen: unknown[] = [];
    transport.onmessage = (message) => seen.push(message);
    expect(seen).toEqual([{ early: 1 }]);
  });

  it('calls onclose once at EOF, after delivering an unterminated last line', async () => {
    const { input, transport, messages, closes } = setup();
    const done = closed(transport);
    await transport.start();
    input.end('{"a":1}\n{"last":1}');
    await done;
    await tick();
    expect(messages).toEqual([{ a: 1 }, { last: 1 }]);
    await transport.close();
    expect(closes()).toBe(1);
  });

  it('reports the close of an input that had already ended before start', async () => {
    const input = new PassThrough();
    input.end();
    input.resume();
    await once(input, 'end');
    const transport = createStreamTransport(input, new PassThrough());
    const done = closed(transport);
    await transport.start();
    await done;
  });
});

describe('createStreamTransport: writing', () => {
  it('writes each message as one NDJSON line', async () => {
    const { output, transport } = setup();
    await transport.start();
    await transport.send({ id: 'a1', text: 'x\ny' });
    await transport.send({ id: 'a2' });
    expect(String(output.read())).toBe('{"id":"a1","text":"x\\ny"}\n{"id":"a2"}\n');
  });

  it('waits for drain under backpressure and keeps writes in order', async () => {
    const { output, transport } = setup({ highWaterMark: 16 });
    await transport.start();
    let firstDone = false;
    let secondDone = false;
    const first = transport.send({ payload: 'p'.repeat(100) }).then(() => {
      firstDone = true;
    });
    const second = transport.send({ n: 2 }).then(() => {
      secondDone = true;
    });
    await tick();
    await tick();
    expect(firstDone).toBe(false);
    expect(secondDone).toBe(false);
    // Nothing of the second message was written while the first one waited for drain.
    expect(output.readableLength).toBe(Buffer.byteLength(JSON.stringify({ payload: 'p'.repeat(100) })) + 1);

    const chunks: Buffer[] = [];
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    await Promise.all([first, second]);
    expect(firstDone && secondDone).toBe(true);
    await tick();
    expect(Buffer.concat(chunks).toString()).toBe(`${JSON.stringify({ payload: 'p'.repeat(100) })}\n{"n":2}\n`);
  });

  it('rejects sends after close with CONNECTION_CLOSED and ends the output', async () => {
    const { input, output, transport, closes } = setup();
    await transport.start();
    await transport.close();
    await transport.close();
    expect(closes()).toBe(1);
    expect(output.writableEnded).toBe(true);
    expect(input.destroyed).toBe(false);
    await expect(transport.send({ late: true })).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
  });

  it('rejects a send waiting for drain when the transport closes', async () => {
    const { transport } = setup({ highWaterMark: 4 });
    await transport.start();
    const pending = transport.send({ payload: 'p'.repeat(64) });
    await tick();
    await transport.close();
    await expect(pending).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
  });

  it('rejects sends on a destroyed output with CONNECTION_CLOSED', async () => {
    const { output, transport } = setup();
    await transport.start();
    output.destroy();
    await expect(transport.send({ n: 1 })).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
  });

  it('turns EPIPE on the output into onerror and rejected sends, never an uncaught error', async () => {
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    const output = new Writable({
      write(_chunk, _encoding, callback) {
        callback(epipe);
      },
    });
    const input = new PassThrough();
    const transport = createStreamTransport(input, output);
    const errors: OneWorksError[] = [];
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    await transport.send({ n: 1 }).catch(() => undefined);
    if (!output.closed) await once(output, 'close');
    expect(errors.map((error) => error.code)).toEqual(['protocol_error']);
    expect(errors[0]?.cause).toBe(epipe);
    await expect(transport.send({ n: 2 })).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
    await transport.close();
  });

  it('survives a real EPIPE from a child that closed its stdin', async () => {
    const script = "require('fs').closeSync(0); process.stdout.write('{\"ready\":true}\\n'); setInterval(() => {}, 1000);";
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = once(child, 'exit');
    try {
      const transport = createStreamTransport(child.stdout, child.stdin);
      const errors: OneWorksError[] = [];
      transport.onerror = (error) => errors.push(error);
      const ready = new Promise((resolve) => {
        transport.onmessage = resolve;
      });
      await transport.start();
      expect(await ready).toEqual({ ready: true });
      // The pipe has no reader any more: the write fails with EPIPE, reported and not thrown.
      await transport.send({ n: 1 }).catch(() => undefined);
      if (!child.stdin.closed) await once(child.stdin, 'close');
      expect(errors.map((error) => error.code)).toEqual(['protocol_error']);
      expect(errors[0]?.cause).toMatchObject({ code: 'EPIPE' });
      await expect(transport.send({ n: 2 })).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
      await transport.close();
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(() => process.kill(child.pid ?? -1, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
