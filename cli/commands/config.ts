import type { Command } from 'commander';
import { configJsonSchema, maskSecrets, renderEffectiveConfig } from '../../core/config/index.js';
import { configWarnings } from '../config-warnings.js';
import { CONFIG_SCHEMA, createContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { PROCESS_STDOUT } from '../stdio.js';
import type { CommandBody, GlobalOptions } from '../main.js';

export function registerConfigCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  const config = program.command('config').description('validate and inspect one-works.yaml');
  config
    .command('check')
    .description('validate the config and print the effective configuration (secrets shown as ***)')
    .action((_opts: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        const source = ctx.configPath ?? `(no config file: defaults, and the current directory ${ctx.cwd} approved alone)`;
        ctx.out.info(`config: ${source}`);
        // The effective configuration: without a file, the current directory is the approved root.
        const effective = ctx.implicitApproval
          ? { ...ctx.config, workspaces: { ...ctx.config.workspaces, approved: ctx.approvedRoots } }
          : ctx.config;
        const warnings = await configWarnings(ctx);
        ctx.out.result(
          { path: ctx.configPath ?? null, config: maskSecrets(CONFIG_SCHEMA, effective), warnings: warnings.map((w) => w.detail) },
          () => renderEffectiveConfig(CONFIG_SCHEMA, effective).trimEnd(),
        );
        // Valid, but will not work as is: said on stderr, the exit code stays 0.
        for (const warning of warnings) ctx.out.info(`warning: ${warning.detail}`);
        return EXIT.ok;
      }),
    );
  config
    .command('schema')
    .description('print the JSON Schema of one-works.yaml (for editor completion)')
    .action(() =>
      run(async () => {
        PROCESS_STDOUT.write(`${JSON.stringify(configJsonSchema(CONFIG_SCHEMA), null, 2)}\n`);
        return EXIT.ok;
      }),
    );
}
