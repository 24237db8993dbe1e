import type { z } from 'zod';

/**
 * The envelope a CLI's wire format wraps around JSON-RPC-style messages. The adapter supplies
 * it (for droid: the `type` discriminator and the version fields); the connection never names a
 * CLI.
 */
export interface Envelope {
  request(id: RpcId, method: string, params: unknown): unknown;
  notification(method: string, params: unknown): unknown;
  /** The response to inbound request `id`; `id` is the request's own, of the same type (number or string). */
  response(id: RpcId, result: unknown): unknown;
  errorResponse(id: RpcId, error: WireError): unknown;
  /** Classifies one inbound message. Must not throw. */
  classify(message: unknown): Inbound;
  /**
   * Optional: the frame that tells the peer an outbound request was abandoned (deadline or
   * abort), or `undefined` to send nothing. Omit it when the wire has no such message.
   */
  cancelRequest?(id: RpcId, method: string): unknown;
}

/**
 * A JSON-RPC id: a string or a number. The type is part of the id: `1` and `"1"` are different
 * requests, and a response carries its request's id unchanged (a number stays a number).
 */
export type RpcId = string | number;

export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

export type Inbound =
  | { kind: 'request'; id: RpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: RpcId; result: unknown }
  | { kind: 'error'; id: RpcId | null; error: WireError }
  | { kind: 'invalid'; reason: string };

/** A request's method name with its params and result schemas, kept together. */
export interface RequestDescriptor<P, R> {
  method: string;
  params: z.ZodType<P>;
  result: z.ZodType<R>;
}

export interface RequestOptions {
  /** Deadline for the response; default the connection's `defaultTimeoutMs`. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Context given to inbound request handlers. */
export interface HandlerContext {
  /** Aborted when the connection closes. */
  signal: AbortSignal;
  /** The inbound request's id, as the peer sent it (number or string). */
  id: RpcId;
}

export type ConnectionState = 'new' | 'open' | 'closing' | 'closed';
