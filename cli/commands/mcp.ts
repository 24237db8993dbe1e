import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { createContext } from '../context.js';
import { connectMatchingOrchestrator } from '../daemon/connect-matching.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import {
  createSharedOrchestrator,
  parseListenAddress,
  parseOrigin,
  readTokenFile,
  serveHttp,
  serveStdio,
  type McpServerOptions,
  type SharedOrchestrator,
} from '../mcp/index.js';
import { isFleet } from '../fleet/backend.js';
import { openFleet } from '../fleet/open-fleet.js';
import { processRedactor } from '../output.js';
import { packageVersion } from '../package-root.js';
import { claimShutdown } from '../shutdown.js';
import { PROCESS_STDERR } from '../stdio.js';
import { terminalSafe } from '../terminal-text.js';

interface McpFlags {
  http?: string;
  tokenFile?: string;
  allowOrigin?: string[];
}

/**
 * `one-works mcp`: the orchestrator as an MCP server for assistants, over stdio (default) or
 * over authenticated Streamable HTTP (`--http 127.0.0.1:PORT --token-file F`). Tool calls go
 * through the same orchestrator client as the CLI (auto-starting `one-works serve`, and checking
 * like run/send that it runs with this command's config and environment), so they get
 * the same limits, queues and sandboxes. Runs until stdin ends (stdio) or SIGTERM/SIGINT.
 */
export function registerMcpCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('mcp')
    .description('serve One Works sessions to MCP clients (assistants): stdio by default, or authenticated HTTP with --http')
    .option('--http <host:port>', 'serve stateless Streamable HTTP on POST /mcp at this loopback address (needs --token-file)')
    .option('--token-file <file>', 'file holding the bearer token (≥32 characters, mode 600) that every HTTP request must present')
    .option(
      '--allow-origin <origin>',
      'also accept browser requests from this origin (repeatable)',
      (value: string, all: string[] | undefined) => [...(all ?? []), value],
    )
    .action((flags: McpFlags, cmd: Command) =>
      run(async () => {
        const http = await httpSettings(flags);
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        // The same fingerprint check as run/send: an orchestrator started with another config or
        // environment is replaced when idle and auto-started, refused (orchestrator_mismatch) otherwise.
        // Its notices go to stderr (ctx.out.info), so stdout carries protocol messages only.
        // In a fleet (state.backend postgres), tool calls go to the fleet's database instead.
        const orchestrator = isFleet(ctx) ? await fleetAccess(ctx) : createSharedOrchestrator(() => connectMatchingOrchestrator(ctx));
        const options: McpServerOptions = {
          orchestrator,
          version: packageVersion(),
          redact: (text) => processRedactor.redact(text),
          log,
        };
        const shutdown = claimShutdown();
        try {
          if (http) await serveHttp({ ...options, ...http }, shutdown.signal);
          else await serveStdio(options, shutdown.signal);
        } finally {
          shutdown.release();
          await orchestrator.close();
        }
        return EXIT.ok;
      }),
    );
}

// Flag checks come before the config is loaded: a bad token file fails fast with its own message.
async function httpSettings(flags: McpFlags): Promise<Awaited<ReturnType<typeof readHttp>> | undefined> {
  if (flags.http === undefined) {
    if (flags.tokenFile !== undefined || (flags.allowOrigin ?? []).length > 0) {
      throw new OneWorksError(ERROR_CODES.USAGE, '--token-file and --allow-origin only apply with --http HOST:PORT');
    }
    return undefined;
  }
  return readHttp(flags.http, flags);
}

async function readHttp(http: string, flags: McpFlags) {
  const address = parseListenAddress(http);
  if (flags.tokenFile === undefined) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      '--http needs --token-file FILE: there is no unauthenticated HTTP mode; create a token with: (umask 077; openssl rand -hex 32 > FILE)',
    );
  }
  const token = await readTokenFile(resolve(flags.tokenFile));
  processRedactor.register(token);
  return { address, token, allowOrigins: (flags.allowOrigin ?? []).map(parseOrigin) };
}

// The fleet client as the tools' orchestrator: one database pool for every call, closed at the end.
async function fleetAccess(ctx: Parameters<typeof openFleet>[0]): Promise<SharedOrchestrator> {
  const fleet = await openFleet(ctx);
  return { use: (call) => call(fleet.client), close: () => fleet.close() };
}

function log(line: string): void {
  PROCESS_STDERR.write(`one-works mcp: ${terminalSafe(processRedactor.redact(line))}\n`);
}
