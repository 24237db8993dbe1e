import { describe, expect, it } from 'vitest';
import { bwrapAvailable, wrapWithBwrap } from '../../../core/process/index.js';

describe('wrapWithBwrap', () => {
  const launch = { command: '/cache/droid', args: ['exec', '--stream-jsonrpc'], cwd: '/work/ws', env: { A: '1' } };
  const wrapped = wrapWithBwrap(launch, { workspace: '/work/ws', home: '/state/sessions/s-1/home' });

  it('runs the launch under bwrap after a -- separator, keeping the rest of the launch', () => {
    expect(wrapped.command).toBe('bwrap');
    expect(wrapped.args.slice(-4)).toEqual(['--', '/cache/droid', 'exec', '--stream-jsonrpc']);
    expect(wrapped.cwd).toBe('/work/ws');
    expect(wrapped.env).toEqual({ A: '1' });
  });

  it('mounts the root read-only, fresh /dev /proc /tmp, and the workspace and home writable', () => {
    const options = wrapped.args.slice(0, wrapped.args.indexOf('--'));
    expect(options.join(' ')).toBe(
      [
        '--ro-bind / /',
        '--dev /dev',
        '--proc /proc',
        '--tmpfs /tmp',
        '--bind /work/ws /work/ws',
        '--bind /state/sessions/s-1/home /state/sessions/s-1/home',
        '--die-with-parent',
        '--unshare-pid',
      ].join(' '),
    );
  });

  it('binds after the /tmp tmpfs so paths under /tmp stay visible', () => {
    const tmp = wrapWithBwrap(launch, { workspace: '/tmp/ws', home: '/tmp/home' });
    expect(tmp.args.indexOf('--tmpfs')).toBeLessThan(tmp.args.indexOf('/tmp/ws'));
    expect(tmp.args.indexOf('--tmpfs')).toBeLessThan(tmp.args.indexOf('/tmp/home'));
  });
  it('binds readOnlyOver read-only last, over the writable paths', () => {
    const carved = wrapWithBwrap(launch, {
      workspace: '/work/ws',
      home: '/h',
      readOnly: ['/repo/.git'],
      writable: ['/repo/.git/refs/heads/ow'],
      readOnlyOver: ['/repo/.git/refs/heads/ow/s-2'],
    });
    const options = carved.args.slice(0, carved.args.indexOf('--')).join(' ');
    expect(options).toContain(
      '--ro-bind /repo/.git /repo/.git --bind /work/ws /work/ws --bind /h /h --bind /repo/.git/refs/heads/ow /repo/.git/refs/heads/ow --ro-bind /repo/.git/refs/heads/ow/s-2 /repo/.git/refs/heads/ow/s-2 --die-with-parent',
    );
  });
});

describe('bwrapAvailable', () => {
  it('is false when the bwrap binary does not exist', async () => {
    expect(await bwrapAvailable({ command: '/nonexistent/bwrap' })).toBe(false);
  });
});
