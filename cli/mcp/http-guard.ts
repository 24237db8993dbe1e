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

/** A request answered by the guard itself: a refusal (status, JSON body, extra headers) or a CORS preflight (204, no body). */
export interface Refusal {
  status: number;
  body?: { error: string };
  headers?: Record<string, string>;
}

/** The only path served. */
export const MCP_PATH = '/mcp';

/** Request headers a browser client may send (the MCP Streamable HTTP ones and the token). */
export const CORS_ALLOWED_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id';
/** How long a browser may cache a preflight answer, in seconds. */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Checks a request before its body is read, in this order: Host (403; DNS-rebinding defence),
 * Origin when present (403), then a CORS preflight (OPTIONS with an approved Origin) is
 * answered 204 with the CORS headers before any token check, since browsers send it without
 * credentials (404 on another path); then bearer token (401 with WWW-Authenticate), path (404),
 * method (405 for anything but POST; the server is stateless, so GET streams and DELETE are not
 * offered). Returns undefined when the request may proceed. Add {@link corsHeaders} to every
 * response, refusals included.
 */
export function checkRequest(
  request: { method?: string | undefined; url?: string | undefined; headers: IncomingHttpHeaders },
  config: GuardConfig,
): Refusal | undefined {
  const { headers } = request;
  if (!allowedHosts(config.port).has((headers.host ?? '').toLowerCase())) return { status: 403, body: { error: 'host not allowed' } };
  const origin = headers.origin;
  if (origin !== undefined && !allowedOrigins(config).has(origin.toLowerCase()))
    return { status: 403, body: { error: 'origin not allowed' } };
  const path = (request.url ?? '').split('?')[0];
  if (request.method === 'OPTIONS' && origin !== undefined) {
    if (path !== MCP_PATH) return { status: 404, body: { error: `not found; the MCP endpoint is POST ${MCP_PATH}` } };
    return {
      status: 204,
      headers: {
        'Access-Control-Allow-Methods': 'POST',
        'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS,
        'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
      },
    };
  }
  if (!bearerMatches(headers.authorization, config.token)) {
    return { status: 401, body: { error: 'missing or invalid bearer token' }, headers: { 'WWW-Authenticate': 'Bearer realm="one-works"' } };
  }
  if (path !== MCP_PATH) return { status: 404, body: { error: `not found; the MCP endpoint is POST ${MCP_PATH}` } };
  if (request.method !== 'POST')
    return { status: 405, body: { error: 'method not allowed; this stateless server accepts POST only' }, headers: { Allow: 'POST' } };
  return undefined;
}

/**
 * True when `authorization` is `Bearer <expected>`. Compares SHA-256 digests of the presented
 * and expected tokens with crypto.timingSafeEqual: both are 32 bytes whatever was presented, so
 * neither a wrong length nor a wrong prefix returns earlier than a near miss.
 */
export function bearerMatches(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization ?? '');
  const presented = createHash('sha256')
    .update(match?.[1] ?? '')
    .digest();
  const wanted = createHash('sha256').update(expected).digest();
  return timingSafeEqual(presented, wanted) && match !== null;
}

/**
 * The CORS headers of any response to a request whose Origin is approved (the Host check
 * passed): Access-Control-Allow-Origin naming that origin, and Vary: Origin. Empty for a
 * request without an Origin or with one that is not approved (which {@link checkRequest} refuses).
 */
export function corsHeaders(headers: IncomingHttpHeaders, config: GuardConfig): Record<string, string> {
  const origin = headers.origin;
  if (origin === undefined || !allowedOrigins(config).has(origin.toLowerCase())) return {};
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
}

function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

function allowedOrigins(config: GuardConfig): Set<string> {
  return new Set(
    [`http://127.0.0.1:${config.port}`, `http://localhost:${config.port}`, ...config.allowOrigins].map((o) => o.toLowerCase()),
  );
}
