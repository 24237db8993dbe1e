#!/usr/bin/env node
// Regenerates adapters/codex/generated/ from the pinned Codex binary itself:
//
//   node scripts/generate-codex-wire.mjs <path of the codex binary>
//
// It runs `codex app-server generate-ts --out <tmp>` in a throwaway CODEX_HOME, then copies the
// types the adapter reads (ROOTS below) and everything they import, adding the `.js` extensions
// NodeNext wants. adapters/codex/wire-check.ts asserts at compile time that the adapter's zod
// schemas accept every value of these types, so a new pinned version that changes a shape the
// adapter reads fails `tsc` after regenerating.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOTS = [
  'InitializeParams',
  'InitializeResponse',
  'v2/ThreadStartParams',
  'v2/ThreadStartResponse',
  'v2/ThreadResumeParams',
  'v2/ThreadResumeResponse',
  'v2/TurnStartParams',
  'v2/TurnStartResponse',
  'v2/TurnInterruptParams',
  'v2/TurnSteerParams',
  'v2/TurnStartedNotification',
  'v2/TurnCompletedNotification',
  'v2/ItemStartedNotification',
  'v2/ItemCompletedNotification',
  'v2/AgentMessageDeltaNotification',
  'v2/CommandExecutionOutputDeltaNotification',
  'v2/ThreadTokenUsageUpdatedNotification',
  'v2/ErrorNotification',
  'v2/WarningNotification',
  'v2/CommandExecutionRequestApprovalParams',
  'v2/CommandExecutionRequestApprovalResponse',
  'v2/FileChangeRequestApprovalParams',
  'v2/FileChangeRequestApprovalResponse',
  'v2/PermissionsRequestApprovalParams',
  'v2/PermissionsRequestApprovalResponse',
  'v2/ToolRequestUserInputParams',
  'v2/ToolRequestUserInputResponse',
  'v2/ModelListParams',
  'v2/ModelListResponse',
  'v2/ThreadLoadedListParams',
  'v2/ThreadLoadedListResponse',
];

const binary = process.argv[2];
if (!binary || !existsSync(binary)) {
  process.stderr.write('usage: node scripts/generate-codex-wire.mjs <path of the pinned codex binary>\n');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(here, '..', 'adapters', 'codex', 'generated');
const scratch = mkdtempSync(path.join(tmpdir(), 'codex-wire-'));
const home = mkdtempSync(path.join(tmpdir(), 'codex-wire-home-'));
try {
  const env = { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home };
  const version = execFileSync(binary, ['--version'], { env, encoding: 'utf8' }).trim();
  execFileSync(binary, ['app-server', 'generate-ts', '--out', scratch], { env, stdio: 'inherit' });
  rmSync(outDir, { recursive: true, force: true });
  const queue = [...ROOTS];
  const done = new Set();
  while (queue.length > 0) {
    const name = queue.pop();
    if (done.has(name)) continue;
    done.add(name);
    const source = readFileSync(path.join(scratch, `${name}.ts`), 'utf8');
    const dir = path.posix.dirname(name);
    const rewritten = source.replace(/from "(\.{1,2}\/[^"]+)"/g, (_match, spec) => {
      queue.push(path.posix.normalize(path.posix.join(dir, spec)));
      return `from "${spec}.js"`;
    });
    const target = path.join(outDir, `${name}.ts`);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, rewritten);
  }
  writeFileSync(
    path.join(outDir, 'README.md'),
    `# Generated: do not edit\n\nThe app-server wire types of \`${version}\`, made by\n\n` +
      '```\ncodex app-server generate-ts --out <dir>\n```\n\n' +
      `and reduced by \`node scripts/generate-codex-wire.mjs <codex binary>\` to the ${ROOTS.length} types the ` +
      `adapter reads and what they import (${done.size} files). Regenerate them when the pinned version changes.\n`,
  );
  process.stdout.write(`${version}: ${done.size} files in ${outDir}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
