import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** What the guard needs to know about the listening server. */
export interface GuardConfig {
  /** The port the server listens on (Host and Origin must name it). */
  port: number;
  /** The bearer token every request must present. */
  token: string;
  /** Extra origins allowed besides http://127.0.0.1:PORT and http://localhost:PORT (exact `scheme://host[:port]`). */
  allowOrigins: readonly string[];
}

/** A refused request: status, JSON body and extra headers. */
export interface Refusal {
  status: number;
  body: { error: string };
  headers?: Record<string, string>;
}

/** The only path served. */
export const MCP_PATH = '/mcp';

/**
 * Checks a request before its body is read, in this order: Host (403; DNS-rebinding defence),
 * Origin when present (403), bearer token (401 with WWW-Authenticate), path (404), method
 * (405 for anything but POST; the server is stateless, so GET streams and DELETE are not
 * offered). Returns undefined when the request may proceed.
 */
export function checkRequest(request: { method?: string | undefined; url?: string | undefined; headers: IncomingHttpHeaders }, config: GuardConfig): Refusal | undefined {
  const { headers } = request;
  if (!allowedHosts(config.port).has((headers.host ?? '').toLowerCase())) return { status: 403, body: { error: 'host not allowed' } };
  const origin = headers.origin;
  if (origin !== undefined && !allowedOrigins(config).has(origin.toLowerCase())) return { status: 403, body: { error: 'origin not allowed' } };
  if (!bearerMatches(headers.authorization, config.token)) {
    return { status: 401, body: { error: 'missing or invalid bearer token' }, headers: { 'WWW-Authenticate': 'Bearer realm="one-works"' } };
  }
  const path = (request.url ?? '').split('?')[0];
  if (path !== MCP_PATH) return { status: 404, body: { error: `not found; the MCP endpoint is POST ${MCP_PATH}` } };
  if (request.method !== 'POST') return { status: 405, body: { error: 'method not allowed; this stateless server accepts POST only' }, headers: { Allow: 'POST' } };
  return undefined;
}

/**
 * True when `authorization` is `Bearer <expected>`. Compares SHA-256 digests of the presented
 * and expected tokens with crypto.timingSafeEqual: both are 32 bytes whatever was presented, so
 * neither a wrong length nor a wrong prefix returns earlier than a near miss.
 */
export function bearerMatches(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization ?? '');
  const presented = createHash('sha256').update(match?.[1] ?? '').digest();
  const wanted = createHash('sha256').update(expected).digest();
  return timingSafeEqual(presented, wanted) && match !== null;
}

function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

function allowedOrigins(config: GuardConfig): Set<string> {
  return new Set([`http://127.0.0.1:${config.port}`, `http://localhost:${config.port}`, ...config.allowOrigins].map((o) => o.toLowerCase()));
}
