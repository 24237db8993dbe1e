export type {
  ConnectionState,
  Envelope,
  HandlerContext,
  Inbound,
  RequestDescriptor,
  RequestOptions,
  RpcId,
  WireError,
} from './types.js';
export { createConnection, DEFAULT_REQUEST_TIMEOUT_MS } from './connection.js';
export type { Connection, ConnectionOptions } from './connection.js';
export type { NotificationListener, RequestHandler } from './dispatch.js';
export { NULL_LOGGER } from './logger.js';
export type { ProtocolLogger } from './logger.js';
export { JSONRPC_ERROR_CODES, ProtocolError } from './protocol-error.js';
export { summarizeIssues } from './validate.js';
