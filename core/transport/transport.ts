import type { OneWorksError } from '../errors.js';

/**
 * Moves parsed messages (JSON values, typed `unknown`) between two peers. Knows nothing about
 * ids or methods. Implementations: NDJSON over Node streams, and an in-memory linked pair.
 */
export interface Transport {
  /** Starts reading. Messages that arrive before `onmessage` is set are not lost. */
  start(): Promise<void>;
  /** Serialises and writes one message; resolves once written (respecting backpressure); writes are serialised. */
  send(message: unknown): Promise<void>;
  /** Stops reading and ends the outgoing side. Does NOT destroy the underlying streams' owner (the process). Idempotent. */
  close(): Promise<void>;
  /** One inbound message. */
  onmessage?: (message: unknown) => void;
  /** A malformed or oversized inbound line, or a stream error. The transport stays usable for later lines. Codes: PROTOCOL_ERROR. */
  onerror?: (error: OneWorksError) => void;
  /** The inbound side ended (EOF) or `close()` was called. Called once. */
  onclose?: () => void;
}
