import { stat } from 'node:fs/promises';
import type { DiagnosticNote } from '../core/adapter.js';
import type { CliContext } from './context.js';

/**
 * What is valid but will not work, found from the configuration alone (nothing is contacted):
 * an empty `workspaces.approved` (no workspace can run), an approved root that does not exist
 * or is no directory, and each adapter's config findings (`diagnose` notes marked `config`,
 * e.g. a default model no declared BYOK model has). `config check` and `doctor` print them.
 */
export async function configWarnings(
  ctx: Pick<CliContext, 'config' | 'approvedRoots' | 'implicitApproval' | 'adapter' | 'adapterConfig' | 'enabledAdapters'>,
): Promise<DiagnosticNote[]> {
  const notes: DiagnosticNote[] = [];
  const warn = (name: string, detail: string): void => {
    notes.push({ name, ok: true, warn: true, config: true, detail });
  };
  if (!ctx.implicitApproval && ctx.approvedRoots.length === 0) {
    warn('workspaces', 'workspaces.approved is empty: no workspace can run; add the directories agents may work in');
  }
  for (const root of ctx.approvedRoots) {
    const info = await stat(root).catch(() => undefined);
    if (!info) warn('workspaces', `approved root ${root} does not exist (workspaces.approved)`);
    else if (!info.isDirectory()) warn('workspaces', `approved root ${root} is not a directory (workspaces.approved)`);
  }
  for (const name of ctx.enabledAdapters()) {
    for (const note of ctx.adapter(name).diagnose?.(ctx.adapterConfig(name)) ?? []) if (note.config) notes.push(note);
  }
  return notes;
}
