import type { z } from 'zod';

/**
 * The envelope a CLI's wire format wraps around JSON-RPC-style messages. The adapter supplies
 * it (for droid: the `type` discriminator and the version fields); the connection never names a
 * CLI.
 */
export interface Envelope {
  request(id: string, method: string, params: unknown): unknown;
  notification(method: string, params: unknown): unknown;
  response(id: string, result: unknown): unknown;
  errorResponse(id: string, error: WireError): unknown;
  /** Classifies one inbound message. Must not throw. */
  classify(message: unknown): Inbound;
  /**
   * Optional: the frame that tells the peer an outbound request was abandoned (deadline or
   * abort), or `undefined` to send nothing. Omit it when the wire has no such message.
   */
  cancelRequest?(id: string, method: string): unknown;
}

export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

export type Inbound =
  | { kind: 'request'; id: string; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: string; result: unknown }
  | { kind: 'error'; id: string | null; error: WireError }
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
  id: string;
}

export type ConnectionState = 'new' | 'open' | 'closing' | 'closed';
