import { describe, expect, it } from 'vitest';
import { classifyCodexMessage, codexEnvelope } from '../../../adapters/codex/wire.js';
import { codexBinPath, codexPackageVersion, lookupCodexVersion, parseCodexVersion } from '../../../adapters/codex/versions.js';
import { unwrapShellCommand } from '../../../adapters/codex/tools.js';
import { versionFromUserAgent } from '../../../adapters/codex/app-server-client.js';

describe('codex envelope', () => {
  it('writes JSON-RPC without the jsonrpc member and echoes numeric ids', () => {
    expect(codexEnvelope.request(1, 'initialize', { a: 1 })).toEqual({ id: 1, method: 'initialize', params: { a: 1 } });
    expect(codexEnvelope.notification('initialized', undefined)).toEqual({ method: 'initialized' });
    expect(codexEnvelope.response(0, { decision: 'accept' })).toEqual({ id: 0, result: { decision: 'accept' } });
    expect(codexEnvelope.errorResponse(3, { code: -32601, message: 'no' })).toEqual({ id: 3, error: { code: -32601, message: 'no' } });
  });

  it('classifies what app-server 0.171.0 writes: server requests from id 0, notifications, responses, errors', () => {
    expect(classifyCodexMessage({ id: 0, method: 'item/commandExecution/requestApproval', params: { x: 1 } })).toEqual({
      kind: 'request',
      id: 0,
      method: 'item/commandExecution/requestApproval',
      params: { x: 1 },
    });
    expect(classifyCodexMessage({ method: 'turn/started', params: {}, emittedAtMs: 1 })).toMatchObject({
      kind: 'notification',
      method: 'turn/started',
    });
    expect(classifyCodexMessage({ id: 2, result: { thread: { id: 't' } } })).toEqual({
      kind: 'response',
      id: 2,
      result: { thread: { id: 't' } },
    });
    expect(classifyCodexMessage({ id: 2, error: { code: -32600, message: 'no rollout' } })).toEqual({
      kind: 'error',
      id: 2,
      error: { code: -32600, message: 'no rollout' },
    });
    expect(classifyCodexMessage({ id: true, method: 'x' })).toMatchObject({ kind: 'invalid' });
    expect(classifyCodexMessage([1])).toMatchObject({ kind: 'invalid' });
    expect(classifyCodexMessage({ id: 4 })).toMatchObject({ kind: 'invalid' });
  });
});

describe('codex versions', () => {
  it('maps a CLI version to its platform package version and binary path', () => {
    expect(codexPackageVersion('0.171.0', 'linux', 'x64')).toBe('0.171.0-linux-x64');
    expect(codexPackageVersion('0.171.0', 'darwin', 'arm64')).toBe('0.171.0-darwin-arm64');
    expect(codexBinPath('linux', 'x64')).toBe('vendor/x86_64-unknown-linux-musl/bin/codex');
    expect(codexBinPath('win32', 'x64')).toBe('vendor/x86_64-pc-windows-msvc/bin/codex.exe');
    expect(() => codexPackageVersion('0.171.0', 'aix', 'ppc64')).toThrow(/not published for aix-ppc64/);
  });

  it('reads `codex --version` and the app-server user agent, and knows the qualified line', () => {
    expect(parseCodexVersion('codex-cli 0.171.0\n')).toBe('0.171.0');
    expect(parseCodexVersion('something else')).toBeUndefined();
    expect(versionFromUserAgent('one-works/0.171.0 (Debian 12.0.0; x86_64) unknown (one-works; 0)')).toBe('0.171.0');
    expect(lookupCodexVersion('0.171.3')).toMatchObject({ steer: true });
    expect(lookupCodexVersion('0.172.0')).toBeUndefined();
    expect(lookupCodexVersion('0.171.0-alpha.1')).toBeUndefined();
  });
});

describe('unwrapShellCommand', () => {
  it('takes the script out of the shell wrapper Codex reports, quotes included', () => {
    expect(unwrapShellCommand("/bin/bash -lc 'echo hi > proof.txt && cat proof.txt'")).toBe('echo hi > proof.txt && cat proof.txt');
    expect(unwrapShellCommand("/bin/bash -lc 'perl -e '\\''sleep 3'\\'''")).toBe("perl -e 'sleep 3'");
    expect(unwrapShellCommand('ls -la')).toBe('ls -la');
    // A script that needs no quoting comes bare (0.171.0: `ls` → `/bin/bash -lc ls`).
    expect(unwrapShellCommand('/bin/bash -lc ls')).toBe('ls');
    expect(unwrapShellCommand('/bin/bash -lc "ls"')).toBe('/bin/bash -lc "ls"');
  });
});
