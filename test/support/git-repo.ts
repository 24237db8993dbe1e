import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';

/** Runs git in `cwd` for a test (argv, fixed identity, no user configuration); resolves stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await execa('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
    extendEnv: false,
  });
  return result.stdout;
}

/** A fresh repository in `dir` on branch main with one commit holding `files`. */
export async function initRepo(dir: string, files: Record<string, string>): Promise<void> {
  const { writeFile, mkdir } = await import('node:fs/promises');
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'config', 'user.name', 'Test');
  await git(dir, 'config', 'user.email', 'test@example.com');
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), content);
  }
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'initial');
}

/**
 * A sha256 over every file of a checkout, `.git` included except what git rewrites on reads
 * alone (none of the commands under test read-modify the main checkout's files): paths, modes,
 * symlink targets and contents. Equal hashes mean a byte-identical checkout, index, HEAD and
 * untracked files. `exclude` names top-level `.git` entries left out (e.g. `worktrees`, `objects`,
 * `refs`, `logs` that a worktree session legitimately adds to).
 */
export async function hashTree(dir: string, exclude: readonly string[] = []): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (relative: string): Promise<void> => {
    const entries = (await readdir(join(dir, relative))).sort();
    for (const name of entries) {
      const path = relative === '' ? name : `${relative}/${name}`;
      if (exclude.includes(path)) continue;
      const info = await lstat(join(dir, path));
      hash.update(`${path}\0${info.mode}\0`);
      if (info.isDirectory()) await walk(path);
      else if (info.isSymbolicLink()) hash.update(await readlink(join(dir, path)));
      else hash.update(await readFile(join(dir, path)));
    }
  };
  await walk('');
  return hash.digest('hex');
}
