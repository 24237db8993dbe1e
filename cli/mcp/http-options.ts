import { stat, readFile } from 'node:fs/promises';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { MIN_TOKEN_LENGTH } from './limits.js';

/** Where the HTTP server listens: a loopback host only. */
export interface ListenAddress {
  /** The address bound (127.0.0.1 or ::1). */
  bindHost: string;
  port: number;
}

const LOOPBACK: Record<string, string> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '[::1]': '::1' };

/** Parses `--http HOST:PORT`; refuses (usage) any host but 127.0.0.1, localhost or [::1]. */
export function parseListenAddress(value: string): ListenAddress {
  const match = /^(\[[^\]]*\]|[^:]+):(\d{1,5})$/.exec(value.trim());
  if (!match) throw new OneWorksError(ERROR_CODES.USAGE, `--http: expected HOST:PORT such as 127.0.0.1:8765, got "${value}"`);
  const bindHost = LOOPBACK[match[1]!.toLowerCase()];
  if (bindHost === undefined) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `--http: refusing to listen on "${match[1]}": only loopback hosts are allowed (127.0.0.1, localhost, [::1]); reach it from elsewhere through an SSH tunnel`,
    );
  }
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) throw new OneWorksError(ERROR_CODES.USAGE, `--http: port must be 1–65535, got ${match[2]}`);
  return { bindHost, port };
}

/** Parses an `--allow-origin` value: exactly `scheme://host[:port]`. */
export function parseOrigin(value: string): string {
  let origin: string | undefined;
  try {
    origin = new URL(value).origin;
  } catch {
    origin = undefined;
  }
  if (origin === undefined || origin === 'null' || origin !== value.replace(/\/$/, '')) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `--allow-origin: expected an origin such as http://localhost:3000 (scheme, host and port, no path), got "${value}"`,
    );
  }
  return origin;
}

const CREATE_HINT = (path: string): string => `create one with: (umask 077; openssl rand -hex 32 > ${path})`;

/**
 * Reads the bearer token from `path`. Refuses (usage) a missing or unreadable file, a file
 * readable or writable by group or others (mode & 0o077), and a token shorter than 32
 * characters after trimming or containing whitespace.
 */
export async function readTokenFile(path: string): Promise<string> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new OneWorksError(ERROR_CODES.USAGE, `--token-file: cannot read ${path} (${error.code ?? error.message}); ${CREATE_HINT(path)}`, {
      cause: error,
    });
  });
  if (!info.isFile()) throw new OneWorksError(ERROR_CODES.USAGE, `--token-file: ${path} is not a regular file`);
  if ((info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8).padStart(3, '0');
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `--token-file: ${path} is accessible by group or others (mode ${mode}); restrict it with: chmod 600 ${path}`,
    );
  }
  const token = (await readFile(path, 'utf8')).trim();
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `--token-file: ${path} must hold one token of at least ${MIN_TOKEN_LENGTH} characters without spaces; ${CREATE_HINT(path)}`,
    );
  }
  return token;
}
