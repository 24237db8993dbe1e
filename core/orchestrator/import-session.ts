import type { ImportedSession } from '../adapter.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { prepareSessionHome } from '../sandbox/index.js';
import type { SessionRecord } from '../store/index.js';
import { loadSlot, newBook, newSessionId, type OrchestratorContext } from './orchestrator-context.js';
import { SessionSlot } from './session-slot.js';
import type { ImportSessionRequest, ImportSessionResult } from './types.js';

/**
 * `importSession`: one record file of an agent CLI becomes a One Works session (or adds to the
 * one an earlier import made of the same native session). The adapter parses the file all or
 * nothing before anything is written; events whose key is already in the log are skipped, so a
 * repeated import adds only what is new. The source itself is never touched: the adapter's
 * resume files are copies written into the session's own HOME.
 */
export async function importSession(ctx: OrchestratorContext, request: ImportSessionRequest): Promise<ImportSessionResult> {
  const importer = await ctx.deps.importerFor?.(request.adapter);
  if (!importer) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `adapter ${request.adapter} cannot import sessions (it has no importer, or it is not configured)`,
    );
  }
  const parsed = importer.parse(request.content, request.sourcePath);
  const existing = await findImported(ctx, request.adapter, parsed.nativeSessionId);
  if (existing) return addToExisting(ctx, existing, parsed, request.sourcePath);

  const now = new Date().toISOString();
  const record: SessionRecord = {
    id: await newSessionId(ctx),
    adapter: request.adapter,
    workspace: parsed.workspace,
    createdAt: now,
    updatedAt: now,
    ...(parsed.title ? { title: ctx.redactor.redact(parsed.title) } : {}),
    nativeSessionId: parsed.nativeSessionId,
    status: 'idle',
    imported: importedFacts(ctx, parsed, request.sourcePath, now),
    runs: [],
  };
  const slot = new SessionSlot(newBook(ctx, record, 0));
  await slot.book.update(() => record);
  await prepareSessionHome(ctx.deps.stateDir, record.id, parsed.homeFiles);
  for (const event of parsed.events) slot.book.emit(event);
  await slot.book.flush();
  ctx.slots.set(record.id, slot);
  return { sessionId: record.id, status: 'imported', addedEvents: parsed.events.length };
}

async function addToExisting(
  ctx: OrchestratorContext,
  sessionId: string,
  parsed: ImportedSession,
  sourcePath: string,
): Promise<ImportSessionResult> {
  const slot = await loadSlot(ctx, sessionId);
  if (slot.turns.size > 0) {
    throw new OneWorksError(
      ERROR_CODES.SESSION_BUSY,
      `session ${sessionId} (imported from ${sourcePath}) has a turn in progress; import again when it is idle`,
    );
  }
  const { keys } = await ctx.deps.store.eventIndex(sessionId);
  const fresh = parsed.events.filter((event) => !keys.has(event.key));
  if (fresh.length === 0) return { sessionId, status: 'unchanged', addedEvents: 0 };
  // The resume copy follows the source only while One Works has not continued the session:
  // after a turn of its own, the copy in the session HOME is the one that moves on.
  if (slot.book.record.runs.length === 0) await prepareSessionHome(ctx.deps.stateDir, sessionId, parsed.homeFiles);
  await slot.book.update((current) => ({ ...current, imported: importedFacts(ctx, parsed, sourcePath, new Date().toISOString()) }));
  for (const event of fresh) slot.book.emit(event);
  await slot.book.flush();
  return { sessionId, status: 'updated', addedEvents: fresh.length };
}

function importedFacts(
  ctx: OrchestratorContext,
  parsed: ImportedSession,
  source: string,
  importedAt: string,
): NonNullable<SessionRecord['imported']> {
  return {
    source,
    importedAt,
    kind: parsed.kind,
    ...(parsed.parentNativeSessionId ? { parentNativeSessionId: parsed.parentNativeSessionId } : {}),
    nativeDetails: ctx.redactor.redactValue(parsed.nativeDetails),
  };
}

// The session an earlier import made of this native session, if any.
async function findImported(ctx: OrchestratorContext, adapter: string, nativeSessionId: string): Promise<string | undefined> {
  for (const slot of ctx.slots.values()) {
    const { record } = slot.book;
    if (record.imported && record.adapter === adapter && record.nativeSessionId === nativeSessionId) return record.id;
  }
  const records = await ctx.deps.store.listSessions();
  return records.find((r) => r.imported && r.adapter === adapter && r.nativeSessionId === nativeSessionId)?.id;
}
