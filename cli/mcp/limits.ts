/** Longest single wait_for_sessions call, in seconds (the orchestrator serves at most 60 s a call). */
export const MAX_WAIT_SECONDS = 60;
/** Largest HTTP request body accepted; a larger one is refused with 413 before it is read. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Time for a client to send its request headers. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** Time for a client to send its whole request (headers and body). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Longest time one HTTP request may take to be answered: a full wait_for_sessions plus a margin. */
export const HANDLING_TIMEOUT_MS = (MAX_WAIT_SECONDS + 15) * 1000;
/** Shortest accepted bearer token, in characters. */
export const MIN_TOKEN_LENGTH = 32;
/** Smallest read_session maxBytes: room for the summary and a few cut events. */
export const MIN_READ_BYTES = 1024;
