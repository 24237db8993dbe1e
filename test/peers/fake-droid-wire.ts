import { writeSync } from 'node:fs';
import { z } from 'zod';
import type { FakeDroidConfig } from './fake-droid-config.js';

// The envelope droid 0.225.2 enforces on inbound frames (checked against the real binary):
// `jsonrpc` "2.0", `type`, `factoryApiVersion` "1.0.0", an optional string protocol version,
// string ids (an empty string is accepted), and extra top-level fields such as `_meta` allowed.
const base = {
  jsonrpc: z.literal('2.0'),
  factoryApiVersion: z.literal('1.0.0'),
  factoryProtocolVersion: z.string().optional(),
};
const InboundSchema = z.discriminatedUnion('type', [
  z.looseObject({ ...base, type: z.literal('request'), id: z.string(), method: z.string(), params: z.unknown() }),
  z.looseObject({ ...base, type: z.literal('notification'), method: z.string(), params: z.unknown() }),
  z.looseObject({ ...base, type: z.literal('response'), id: z.string(), result: z.unknown(), error: z.unknown() }),
]);

export type Inbound = z.infer<typeof InboundSchema>;

/** Parses one stdin line; `undefined` plus the JSON-RPC error droid would send when it is invalid. */
export function parseInbound(line: string): { frame: Inbound } | { error: { code: number; message: string } } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: { code: -32700, message: 'Invalid JSON' } };
  }
  const parsed = InboundSchema.safeParse(value);
  return parsed.success ? { frame: parsed.data } : { error: { code: -32700, message: 'Invalid JSON-RPC message' } };
}

/**
 * Writes frames to stdout with droid's envelope and the configured (possibly faulty) versions.
 * Writes are synchronous, so a frame is fully in the pipe when `send` returns and closing stdout
 * afterwards loses nothing. After `mute()` nothing more is written.
 */
export class FakeWire {
  #config: FakeDroidConfig;
  #muted = false;

  constructor(config: FakeDroidConfig) {
    this.#config = config;
  }

  mute(): void {
    this.#muted = true;
  }

  /** Writes one line verbatim (used for malformed and oversized frames). */
  raw(line: string): void {
    if (this.#muted) return;
    const data = Buffer.from(`${line}\n`, 'utf8');
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += writeSync(1, data, offset);
      } catch (error) {
        // The pipe is non-blocking on some platforms: retry on EAGAIN, give up when the reader is gone.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      }
    }
  }

  #frame(type: string, fields: Record<string, unknown>): void {
    const envelope: Record<string, unknown> = { jsonrpc: '2.0', type, factoryApiVersion: this.#config.api };
    if (this.#config.protocol !== undefined) envelope.factoryProtocolVersion = this.#config.protocol;
    this.raw(JSON.stringify({ ...envelope, ...fields }));
  }

  respond(id: string | null, outcome: { result: unknown } | { error: { code: number; message: string } }): void {
    const times = this.#config.faults.has('double-response') && id !== null ? 2 : 1;
    for (let i = 0; i < times; i += 1) this.#frame('response', { id, ...outcome });
  }

  /** A `droid.session_notification`; `sessionId` is left out where droid leaves it out. */
  notify(notification: Record<string, unknown>, sessionId?: string): void {
    const params = sessionId === undefined ? { notification } : { sessionId, notification };
    this.#frame('notification', { method: 'droid.session_notification', params });
  }
}
