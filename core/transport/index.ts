export type { Transport } from './transport.js';
export {
  DEFAULT_MAX_LINE_BYTES,
  MAX_REPORTED_LINE_CHARS,
  NdjsonCodec,
  serializeMessage,
  truncateLine,
} from './ndjson-codec.js';
export type { CodecResult, NdjsonCodecOptions } from './ndjson-codec.js';
export { createStreamTransport } from './stream-transport.js';
export type { StreamTransportOptions } from './stream-transport.js';
export { createLinkedPair } from './in-memory.js';
