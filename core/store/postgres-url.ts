/**
 * The parts of a `postgres://` URL that may be shown, and the ones that must not. The URL
 * (state.postgres.url) is a secret as a whole; its password is one alone as well, in the forms
 * a message could hold it (as written, percent-decoded).
 */

/** `host:port/database` of a PostgreSQL URL, for messages; never the user or password. */
export function postgresWhere(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port === '' ? '5432' : parsed.port;
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
    return `${parsed.hostname || 'localhost'}:${port}/${database}`;
  } catch {
    return '(an unparsable PostgreSQL URL)';
  }
}

/** The secrets in a PostgreSQL URL, to register with a redactor: the URL and its password. */
export function postgresUrlSecrets(url: string): string[] {
  const secrets = new Set<string>([url]);
  try {
    const { password } = new URL(url);
    if (password !== '') {
      secrets.add(password);
      secrets.add(decodeURIComponent(password));
    }
  } catch {
    // Not a URL: the whole string stays the secret.
  }
  return [...secrets].filter((secret) => secret.length > 0).sort((a, b) => b.length - a.length);
}
