import { lstat, mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { PermissionAsk, SandboxCommand } from '../../core/adapter.js';
import type { ToolKind } from '../../core/events/index.js';
import type { RunCommandResult } from '../../core/process/run-command.js';
import type { ToolDefinition } from './wire.js';

/**
 * The built-in `workspace` tool set: read, list, search, write, edit and run a command. One
 * Works executes them itself: file tools in-process, confined to the workspace (real paths, so
 * a symlink out of it is refused); `run_command` through the session sandbox (`SessionIO.exec`:
 * allowlisted environment, session HOME, bubblewrap when configured). Every call is decided by
 * the permission policy before it runs (session.ts).
 */

/** What a tool returns to the runner. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
}

/** What executing a tool needs from the session. */
export interface ToolContext {
  workspace: string;
  exec: ((command: SandboxCommand) => Promise<RunCommandResult>) | undefined;
  commandTimeoutMs: number;
  signal: AbortSignal;
}

interface BuiltinTool<S extends z.ZodType> {
  name: string;
  kind: ToolKind;
  description: string;
  schema: S;
  /** The JSON Schema the runner is given, when it is not derived from `schema` (an MCP server's own). */
  inputSchema?: Record<string, unknown>;
  /** The policy facts of a call: command, target paths (absolute). */
  facts(args: z.infer<S>, workspace: string): { command?: string; paths?: string[]; label: string };
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutcome>;
}

const MAX_READ_BYTES = 256 * 1024;
const MAX_OUTPUT_BYTES = 64 * 1024;
const MAX_LIST = 500;
const MAX_MATCHES = 200;

const PathArgs = z.strictObject({ path: z.string().min(1).describe('File path, relative to the workspace.') });

const readFileTool: BuiltinTool<typeof PathArgs> = {
  name: 'read_file',
  kind: 'read',
  description: 'Read a text file of the workspace.',
  schema: PathArgs,
  facts: (args, workspace) => ({ paths: [path.resolve(workspace, args.path)], label: `read: ${args.path}` }),
  run: async (args, ctx) => {
    const file = await confined(ctx.workspace, args.path);
    const content = await readFile(file);
    if (content.length > MAX_READ_BYTES) return ok(`${content.subarray(0, MAX_READ_BYTES).toString('utf8')}\n… (truncated)`);
    return ok(content.toString('utf8'));
  },
};

const ListArgs = z.strictObject({ path: z.string().min(1).default('.').describe('Directory, relative to the workspace.') });

const listDirTool: BuiltinTool<typeof ListArgs> = {
  name: 'list_dir',
  kind: 'search',
  description: 'List a directory of the workspace (directories end with /).',
  schema: ListArgs,
  facts: (args) => ({ label: `search: ${args.path}` }),
  run: async (args, ctx) => {
    const dir = await confined(ctx.workspace, args.path);
    const entries = await readdir(dir, { withFileTypes: true });
    const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
    return ok(names.slice(0, MAX_LIST).join('\n') + (names.length > MAX_LIST ? '\n… (truncated)' : ''));
  },
};

const SearchArgs = z.strictObject({
  pattern: z.string().min(1).describe('Text to find (plain substring).'),
  path: z.string().min(1).default('.').describe('Directory to search, relative to the workspace.'),
});

const searchTool: BuiltinTool<typeof SearchArgs> = {
  name: 'search',
  kind: 'search',
  description: 'Find lines containing a text in the files below a workspace directory (path:line: text).',
  schema: SearchArgs,
  facts: (args) => ({ label: `search: ${args.pattern} in ${args.path}` }),
  run: async (args, ctx) => {
    const root = await confined(ctx.workspace, args.path);
    const matches: string[] = [];
    await walk(root, async (file) => {
      const text = await readFile(file, 'utf8');
      for (const [index, line] of text.split('\n').entries()) {
        if (matches.length >= MAX_MATCHES) return;
        if (line.includes(args.pattern)) matches.push(`${path.relative(ctx.workspace, file)}:${index + 1}: ${line.slice(0, 300)}`);
      }
    });
    return ok(matches.length === 0 ? '(no matches)' : matches.join('\n'));
  },
};

const WriteArgs = z.strictObject({
  path: z.string().min(1).describe('File path, relative to the workspace.'),
  content: z.string().describe('The whole new content.'),
});

const writeFileTool: BuiltinTool<typeof WriteArgs> = {
  name: 'write_file',
  kind: 'edit',
  description: 'Create or replace a file of the workspace.',
  schema: WriteArgs,
  facts: (args, workspace) => ({ paths: [path.resolve(workspace, args.path)], label: `edit: ${args.path}` }),
  run: async (args, ctx) => {
    const file = await confined(ctx.workspace, args.path, { mayNotExist: true });
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, args.content);
    return ok(`wrote ${Buffer.byteLength(args.content)} bytes to ${args.path}`);
  },
};

const EditArgs = z.strictObject({
  path: z.string().min(1).describe('File path, relative to the workspace.'),
  old_text: z.string().min(1).describe('Text that occurs exactly once in the file.'),
  new_text: z.string().describe('Its replacement.'),
});

const editFileTool: BuiltinTool<typeof EditArgs> = {
  name: 'edit_file',
  kind: 'edit',
  description: 'Replace one exact occurrence of a text in a workspace file.',
  schema: EditArgs,
  facts: (args, workspace) => ({ paths: [path.resolve(workspace, args.path)], label: `edit: ${args.path}` }),
  run: async (args, ctx) => {
    const file = await confined(ctx.workspace, args.path);
    const text = await readFile(file, 'utf8');
    const count = text.split(args.old_text).length - 1;
    if (count !== 1) return fail(`old_text occurs ${count} times in ${args.path}; it must occur exactly once`);
    await writeFile(
      file,
      text.replace(args.old_text, () => args.new_text),
    );
    return ok(`edited ${args.path}`);
  },
};

const RunArgs = z.strictObject({ command: z.string().min(1).describe('A shell command, run in the workspace with /bin/sh -c.') });

const runCommandTool: BuiltinTool<typeof RunArgs> = {
  name: 'run_command',
  kind: 'execute',
  description: 'Run a shell command in the workspace; returns its exit code and output.',
  schema: RunArgs,
  facts: (args) => ({ command: args.command, label: `execute: ${args.command.split('\n')[0]?.slice(0, 80) ?? ''}` }),
  run: async (args, ctx) => {
    if (!ctx.exec) return fail('this session cannot run commands (no sandbox executor)');
    const result = await ctx.exec({
      command: '/bin/sh',
      args: ['-c', args.command],
      cwd: ctx.workspace,
      timeoutMs: ctx.commandTimeoutMs,
      maxOutputBytes: MAX_OUTPUT_BYTES,
      signal: ctx.signal,
    });
    if (ctx.signal.aborted) return fail('interrupted: the command was stopped');
    const status = result.timedOut
      ? `timed out after ${ctx.commandTimeoutMs} ms`
      : result.signal
        ? `killed by ${result.signal}`
        : `exit code ${result.exitCode}`;
    const parts = [result.stdout, result.stderr ? `stderr:\n${result.stderr}` : '', `(${status})`].filter((p) => p !== '');
    return { content: parts.join('\n'), isError: result.exitCode !== 0 };
  },
};

// biome-ignore lint/suspicious/noExplicitAny: each tool parses its own arguments before use
const BUILTIN: readonly BuiltinTool<any>[] = [readFileTool, listDirTool, searchTool, writeFileTool, editFileTool, runCommandTool];

/** A tool the runner may call: a built-in one, or one of an MCP server (mcp-tools.ts). */
export type HarnessTool = BuiltinTool<z.ZodType>;

/** The tools of the named sets, in the order the runner is told about them. */
export function toolsOf(sets: readonly string[]): ReadonlyMap<string, HarnessTool> {
  return new Map(sets.includes('workspace') ? BUILTIN.map((tool) => [tool.name, tool]) : []);
}

/** The definitions sent in `open.params.tools`. */
export function toolDefinitions(tools: ReadonlyMap<string, BuiltinTool<z.ZodType>>): ToolDefinition[] {
  return [...tools.values()].map((tool) => {
    if (tool.inputSchema) return { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
    const { $schema: _, ...schema } = z.toJSONSchema(tool.schema, { io: 'input' }) as Record<string, unknown>;
    return { name: tool.name, description: tool.description, input_schema: schema };
  });
}

/** A validated call: its policy facts and how to run it; or why it cannot be (unknown tool, bad arguments). */
export type PreparedCall =
  | { ok: true; kind: ToolKind; asked: PermissionAsk['tools'][number]; run: (ctx: ToolContext) => Promise<ToolOutcome> }
  | { ok: false; kind: ToolKind; label: string; problem: string };

/** Validates a `tool.call` against the session's tools. Never throws. */
export function prepareCall(
  tools: ReadonlyMap<string, BuiltinTool<z.ZodType>>,
  call: { id: string; name: string; arguments: Record<string, unknown> },
  workspace: string,
): PreparedCall {
  const tool = tools.get(call.name);
  if (!tool)
    return { ok: false, kind: 'other', label: call.name, problem: `unknown tool "${call.name}"; known: ${[...tools.keys()].join(', ')}` };
  const parsed = tool.schema.safeParse(call.arguments);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    return {
      ok: false,
      kind: tool.kind,
      label: call.name,
      problem: `invalid arguments for ${call.name}${where}: ${issue?.message ?? 'bad'}`,
    };
  }
  const facts = tool.facts(parsed.data, workspace);
  return {
    ok: true,
    kind: tool.kind,
    asked: {
      toolUseId: call.id,
      name: call.name,
      kind: tool.kind,
      label: facts.label,
      ...(facts.command === undefined ? {} : { command: facts.command }),
      ...(facts.paths === undefined ? {} : { paths: facts.paths }),
      input: call.arguments,
    },
    run: async (ctx) => {
      try {
        return await tool.run(parsed.data, ctx);
      } catch (error) {
        return fail(error instanceof Error ? error.message : String(error));
      }
    },
  };
}

const ok = (content: string): ToolOutcome => ({ content, isError: false });
const fail = (content: string): ToolOutcome => ({ content, isError: true });

// The real path of `relative` inside the workspace; throws when it leaves it (`..`, absolute, a
// symlink out) or when a symlink makes it differ from the path the policy decided.
async function confined(workspace: string, relative: string, options: { mayNotExist?: boolean } = {}): Promise<string> {
  const target = path.resolve(workspace, relative);
  let real: string;
  try {
    real = await realpath(target);
  } catch (error) {
    if (!options.mayNotExist || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // A new file: its nearest existing ancestor must be inside.
    let parent = path.dirname(target);
    for (;;) {
      try {
        real = path.join(await realpath(parent), path.relative(parent, target));
        break;
      } catch {
        if (parent === path.dirname(parent)) throw error;
        parent = path.dirname(parent);
      }
    }
  }
  const inside = path.relative(await realpath(workspace), real);
  if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) {
    throw new Error(`${relative} is outside the workspace`);
  }
  // The policy decided the path as named (the call's facts); a symlink inside the workspace
  // would make the write land elsewhere (past a denyPaths entry, say), so it is refused.
  if (inside !== path.relative(workspace, target)) {
    throw new Error(`${relative} goes through a symlink to ${inside}; name the file by its real path`);
  }
  return real;
}

// Visits the regular files below `root` (symlinks and .git skipped), stopping at MAX_LIST directories deep enough.
async function walk(root: string, visit: (file: string) => Promise<void>): Promise<void> {
  const info = await lstat(root);
  if (info.isFile()) return visit(root);
  const pending = [root];
  let seen = 0;
  while (pending.length > 0 && seen < 10_000) {
    const dir = pending.shift() as string;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      seen += 1;
      if (entry.name === '.git' || entry.isSymbolicLink()) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile()) await visit(full);
    }
  }
}
