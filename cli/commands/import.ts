import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { collectImportSources } from '../../core/import/index.js';
import { createContext } from '../context.js';
import { connectOrchestrator } from '../daemon/client.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

interface ImportFlags {
  project: string[];
  allProjects?: boolean;
  root?: string;
}

/** One line of the import report (`--json`: one such object per file). */
interface ImportLine {
  path: string;
  status: 'imported' | 'updated' | 'unchanged' | 'refused';
  sessionId?: string;
  addedEvents?: number;
  reason?: string;
}

/**
 * `import ADAPTER`: reads an agent CLI's own session records (read-only) for the current
 * project, named projects or all of them, and records each as a One Works session through the
 * orchestrator. Each file is all or nothing; a refused file is named with its reason and the
 * command exits 2 after importing the others.
 */
export function registerImportCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('import')
    .description("import an agent CLI's own sessions (read-only): `import droid` reads ~/.factory/sessions")
    .argument('<adapter>', 'the adapter whose CLI records to read, e.g. droid')
    .option('--project <dir>', 'import the sessions of this project (repeatable; default: the current directory)', collect, [])
    .option('--all-projects', 'import the sessions of every project under the root')
    .option('--root <dir>', "the CLI's sessions folder (default for droid: ~/.factory/sessions)")
    .action((adapterName: string, flags: ImportFlags, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        if (flags.allProjects && flags.project.length > 0) {
          throw new OneWorksError(ERROR_CODES.USAGE, '--all-projects and --project exclude each other: name projects, or take them all');
        }
        const importer = ctx.adapter(adapterName).importer;
        if (!importer) throw new OneWorksError(ERROR_CODES.USAGE, `adapter ${adapterName} has no session import`);
        const root = resolve(ctx.cwd, flags.root ?? importer.defaultRoot(ctx.env.HOME || homedir()));
        const projects = flags.allProjects ? 'all' : (flags.project.length > 0 ? flags.project : ['.']).map((p) => resolve(ctx.cwd, p));
        const { sources, refused } = await collectImportSources({ root, importer, projects });
        const lines: ImportLine[] = refused.map((r) => ({ path: r.path, status: 'refused', reason: r.reason }));
        if (sources.length > 0) {
          const client = await connectOrchestrator(ctx, { autoStart: true });
          try {
            for (const source of sources) {
              try {
                const result = await client.importSession({ adapter: adapterName, sourcePath: source.path, content: source.content });
                lines.push({ path: source.path, ...result });
              } catch (error) {
                if (!(error instanceof OneWorksError) || error.code !== ERROR_CODES.IMPORT_REFUSED) throw error;
                const prefix = `refused ${source.path}: `;
                const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
                lines.push({ path: source.path, status: 'refused', reason });
              }
            }
          } finally {
            await client.close();
          }
        }
        for (const line of lines) ctx.out.result(line, () => describe(line));
        if (lines.length === 0)
          ctx.out.info(`no ${adapterName} sessions found under ${root} for ${projects === 'all' ? 'any project' : projects.join(', ')}`);
        return lines.some((line) => line.status === 'refused') ? EXIT.usage : EXIT.ok;
      }),
    );
}

function describe(line: ImportLine): string {
  switch (line.status) {
    case 'refused':
      return `refused  ${line.path}: ${line.reason}`;
    case 'unchanged':
      return `unchanged ${line.sessionId} ${line.path} (nothing new)`;
    default:
      return `${line.status} ${line.sessionId} ${line.path} (${line.addedEvents} events)`;
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
