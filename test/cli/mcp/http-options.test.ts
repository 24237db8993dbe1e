import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseListenAddress, parseOrigin, readTokenFile } from '../../../cli/mcp/http-options.js';

describe('parseListenAddress', () => {
  it('accepts loopback hosts only', () => {
    expect(parseListenAddress('127.0.0.1:8765')).toEqual({ bindHost: '127.0.0.1', port: 8765 });
    expect(parseListenAddress('localhost:8765')).toEqual({ bindHost: '127.0.0.1', port: 8765 });
    expect(parseListenAddress('[::1]:8765')).toEqual({ bindHost: '::1', port: 8765 });
    for (const bad of ['0.0.0.0:8765', '192.168.1.4:80', 'example.com:80', '[::]:80']) {
      expect(() => parseListenAddress(bad)).toThrow(
        expect.objectContaining({ code: 'usage', message: expect.stringContaining('only loopback hosts') }),
      );
    }
    for (const bad of ['8765', '127.0.0.1', '127.0.0.1:0', '127.0.0.1:70000'])
      expect(() => parseListenAddress(bad)).toThrow(expect.objectContaining({ code: 'usage' }));
  });
});

describe('parseOrigin', () => {
  it('accepts exact origins and refuses paths or garbage', () => {
    expect(parseOrigin('http://localhost:3000')).toBe('http://localhost:3000');
    expect(parseOrigin('https://app.example')).toBe('https://app.example');
    for (const bad of ['localhost:3000', 'http://localhost:3000/x', 'nonsense'])
      expect(() => parseOrigin(bad)).toThrow(expect.objectContaining({ code: 'usage' }));
  });
});

describe('readTokenFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ow-token-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const write = async (content: string, mode: number): Promise<string> => {
    const path = join(dir, 'token');
    await writeFile(path, content);
    await chmod(path, mode);
    return path;
  };

  it('reads a private token of at least 32 characters, trimmed', async () => {
    expect(await readTokenFile(await write(`${'a'.repeat(40)}\n`, 0o600))).toBe('a'.repeat(40));
  });

  it('refuses a token file readable by group or others, saying how to fix it', async () => {
    for (const mode of [0o640, 0o604, 0o644]) {
      const path = await write('a'.repeat(40), mode);
      await expect(readTokenFile(path)).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining(`chmod 600 ${path}`) });
    }
  });

  it('refuses a missing file, an empty or short token, and a token with spaces', async () => {
    await expect(readTokenFile(join(dir, 'nope'))).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('openssl rand'),
    });
    for (const content of ['', '   \n', 'a'.repeat(31), `${'a'.repeat(20)} ${'b'.repeat(20)}`]) {
      await expect(readTokenFile(await write(content, 0o600))).rejects.toMatchObject({
        code: 'usage',
        message: expect.stringContaining('at least 32 characters'),
      });
    }
  });
});
