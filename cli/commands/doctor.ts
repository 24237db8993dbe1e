import { access, constants, mkdir, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import semver from 'semver';
import { collectSecrets } from '../../core/config/index.js';
import { isOneWorksError } from '../../core/errors.js';
import { probeCli } from '../../core/session/index.js';
import { CONFIG_SCHEMA, createContext, type CliContext } from '../context.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A warning does not fail the doctor. */
  warn?: boolean;
  /** The exit code of a failed check (the README's table: 4 binary, 5 protocol, 6 state); not printed. */
  exit?: number;
}

export function registerDoctorCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('doctor')
    .description('check the selected CLI (present, runnable, in range, protocol), cache, state dir and credentials')
    .action((_o: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        const notes = ctx.enabledAdapters().flatMap((name) => ctx.adapter(name).diagnose?.(ctx.adapterConfig(name)) ?? []);
        const checks: Check[] = [
          ...(await adapterChecks(ctx)),
          await cacheCheck(ctx),
          await stateCheck(ctx),
          ...notes,
          ...limitationChecks(ctx),
        ];
        for (const { exit: _exit, ...c } of checks)
          ctx.out.result(c, () => `${c.warn ? 'warn' : c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
        // The first failed check decides, with the code its kind of problem has everywhere else.
        const failed = checks.find((c) => !c.ok && !c.warn);
        return failed ? (failed.exit ?? EXIT.cli) : EXIT.ok;
      }),
    );
}

// Each declared limitation as a warning: calls the agent runs without asking, so the policy cannot decide them.
function limitationChecks(ctx: CliContext): Check[] {
  return ctx.enabledAdapters().flatMap((name) =>
    (ctx.adapter(name).limitations ?? []).map((limitation) => ({
      name: `${name} limitation ${limitation.tools.join(', ')}`,
      ok: true,
      warn: true,
      detail: `${limitation.kind} calls run without asking One Works; the policy's ${limitation.defeats.join(', ')} rules do not hold for them: ${limitation.reason}`,
    })),
  );
}

async function adapterChecks(ctx: CliContext): Promise<Check[]> {
  const checks: Check[] = [];
  for (const name of ctx.enabledAdapters()) {
    const config = ctx.adapterConfig(name);
    const adapter = ctx.adapter(name);
    let cli: Awaited<ReturnType<typeof adapter.prepare>>;
    try {
      cli = await adapter.prepare(config, {
        services: ctx.services,
        cacheDir: ctx.cacheDir,
        lock: await ctx.lockEntries(name),
        install: false,
      });
    } catch (error) {
      checks.push({
        name: `${name} binary`,
        ok: false,
        detail: error instanceof Error ? error.message : String(error),
        exit: isOneWorksError(error) ? exitCodeFor(error.code) : EXIT.cli,
      });
      continue;
    }
    checks.push({ name: `${name} binary`, ok: true, detail: `${cli.binaryPath} (${cli.source}) runs and reports ${cli.version}` });
    checks.push({
      name: `${name} version`,
      ok: semver.satisfies(cli.version, cli.range),
      detail: `${cli.version} within ${cli.range}`,
      exit: EXIT.cli,
    });
    if (!cli.expected) {
      checks.push({
        name: `${name} protocol`,
        ok: false,
        detail: `${cli.version} is not qualified (table) or probed (one-works.lock); run \`one-works adapters upgrade ${name} ${cli.version}\``,
        exit: EXIT.agent,
      });
      continue;
    }
    try {
      const probe = await probeCli(adapter, config, cli, collectSecrets(CONFIG_SCHEMA, ctx.config));
      const ok = probe.apiVersion === cli.expected.apiVersion && probe.protocolVersion === cli.expected.protocolVersion;
      checks.push({
        name: `${name} protocol`,
        ok,
        detail: `announced API ${probe.apiVersion ?? '(none)'} / protocol ${probe.protocolVersion ?? '(none)'}; expected ${cli.expected.apiVersion} / ${cli.expected.protocolVersion} (${cli.expected.qualifiedBy})`,
        exit: EXIT.agent,
      });
    } catch (error) {
      checks.push({
        name: `${name} protocol`,
        ok: false,
        detail: error instanceof Error ? error.message : String(error),
        exit: isOneWorksError(error) ? exitCodeFor(error.code) : EXIT.agent,
      });
    }
  }
  return checks;
}

async function cacheCheck(ctx: CliContext): Promise<Check> {
  try {
    await mkdir(ctx.cacheDir, { recursive: true });
    await access(ctx.cacheDir, constants.W_OK);
    return { name: 'cache', ok: true, detail: `${ctx.cacheDir} is writable` };
  } catch (error) {
    return { name: 'cache', ok: false, detail: `${ctx.cacheDir} is not writable: ${(error as Error).message}`, exit: EXIT.cli };
  }
}

async function stateCheck(ctx: CliContext): Promise<Check> {
  try {
    const s = await stat(ctx.stateDir);
    if (!s.isDirectory())
      return {
        name: 'state dir',
        ok: false,
        detail: `${ctx.stateDir} is not a directory; move it away or set state.directory`,
        exit: EXIT.state,
      };
    const mode = s.mode & 0o777;
    return mode === 0o700
      ? { name: 'state dir', ok: true, detail: `${ctx.stateDir} is private (0700)` }
      : {
          name: 'state dir',
          ok: false,
          detail: `${ctx.stateDir} has mode 0${mode.toString(8)}; run \`chmod 700 ${ctx.stateDir}\``,
          exit: EXIT.state,
        };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { name: 'state dir', ok: true, warn: true, detail: `${ctx.stateDir} does not exist yet (created 0700 on first run)` };
    return { name: 'state dir', ok: false, detail: `${ctx.stateDir} cannot be used: ${code ?? String(error)}`, exit: EXIT.state };
  }
}
