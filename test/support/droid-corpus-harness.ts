import { readFileSync } from 'node:fs';
import type { PermissionAsk } from '../../core/adapter.js';
import { EventDraftSchema, type EventDraft } from '../../core/events/index.js';
import { classifyDroidFrame } from '../../adapters/droid/envelope.js';
import { DROID_METHODS, ForkSession, ListMcpServers, ListModels, ListTools, RenameSession } from '../../adapters/droid/methods.js';
import { checkNegotiation, parseInitializeResult, parseLoadResult, readAnnouncedVersions } from '../../adapters/droid/negotiate.js';
import { parseDroidNotification } from '../../adapters/droid/notifications.js';
import {
  buildPermissionAsk,
  buildQuestionAsk,
  createDroidProjector,
  type DroidProjector,
  type TurnCompletion,
} from '../../adapters/droid/project.js';
import { AskUserParamsSchema, RequestPermissionParamsSchema } from '../../adapters/droid/wire.js';

/**
 * Replays a recorded droid capture (`{"dir":"out"|"in","frame":…}` per line) through the droid
 * adapter's envelope, wire schemas, negotiation and projector, and lists what comes out. Any frame
 * it cannot map throws a CorpusError naming the file and line: nothing is skipped silently.
 */

export const CORPUS_CLI_VERSION = '0.225.2';
export const CORPUS_EXPECTED = { apiVersion: '1.0.0', protocolVersion: '1.220.0' } as const;
/**
 * The captures show the isolated workspace and HOME as `<WORKSPACE>` and `<HOME>`; the harness
 * puts absolute paths back in their place so path handling sees what it sees in a real run.
 */
export const CORPUS_WORKSPACE = '/work/space';
export const CORPUS_HOME = '/state/sessions/s1/home';

export interface CapturedFrame {
  line: number;
  dir: 'in' | 'out';
  frame: Record<string, unknown>;
}

export type CorpusEntry =
  | { line: number; event: EventDraft; history?: true }
  | { line: number; ask: PermissionAsk }
  | { line: number; turnCompleted: TurnCompletion }
  | { line: 'end'; event: EventDraft };

export class CorpusError extends Error {
  override readonly name = 'CorpusError';
}

export function readCapture(file: string): CapturedFrame[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((text, index) => ({ text, line: index + 1 }))
    .filter(({ text }) => text.trim().length > 0)
    .map(({ text, line }) => {
      const real = text.replaceAll('<WORKSPACE>', CORPUS_WORKSPACE).replaceAll('<HOME>', CORPUS_HOME);
      const record = JSON.parse(real) as { dir: 'in' | 'out'; frame: Record<string, unknown> };
      return { line, dir: record.dir, frame: record.frame };
    });
}

const RESULT_SCHEMAS = new Map([ListModels, ListTools, ListMcpServers, RenameSession, ForkSession].map((d) => [d.method, d.result]));

export interface CaptureRun {
  entries: CorpusEntry[];
  frames: CapturedFrame[];
  projector: DroidProjector;
}

export function runDroidCapture(file: string): CaptureRun {
  const frames = readCapture(file);
  const projector = createDroidProjector({ workspace: CORPUS_WORKSPACE, epoch: 'p1' });
  const entries: CorpusEntry[] = [];
  const sentMethods = new Map<string, string>();
  let negotiated = false;
  const fail = (line: number, why: string): never => {
    throw new CorpusError(`${file}:${line}: ${why}`);
  };
  const record = (line: number, drafts: EventDraft[], history?: true): void => {
    for (const draft of drafts) {
      const checked = EventDraftSchema.safeParse(draft);
      if (!checked.success) fail(line, `projected an invalid ${draft.type} draft: ${checked.error.message}`);
      entries.push(history ? { line, event: draft, history } : { line, event: draft });
    }
  };

  for (const { line, dir, frame } of frames) {
    if (dir === 'out') {
      if (frame.type === 'request' && typeof frame.id === 'string' && typeof frame.method === 'string')
        sentMethods.set(frame.id, frame.method);
      continue;
    }
    if (!negotiated) {
      negotiated = true;
      checkNegotiation(readAnnouncedVersions(frame), CORPUS_EXPECTED, CORPUS_CLI_VERSION);
    }
    const inbound = classifyDroidFrame(frame);
    switch (inbound.kind) {
      case 'invalid':
        fail(line, `envelope rejected the frame: ${inbound.reason}`);
        break;
      case 'notification': {
        if (inbound.method !== DROID_METHODS.sessionNotification) fail(line, `no mapping for notification method ${inbound.method}`);
        const parsed = parseDroidNotification(inbound.params);
        if (parsed.kind !== 'known') fail(line, `notification is ${parsed.kind}: ${JSON.stringify(parsed)}`);
        record(line, projector.project(inbound.params));
        const completed = projector.takeCompletion();
        if (completed) entries.push({ line, turnCompleted: completed });
        break;
      }
      case 'request': {
        if (inbound.method === DROID_METHODS.requestPermission) {
          entries.push({
            line,
            ask: buildPermissionAsk(String(inbound.id), RequestPermissionParamsSchema.parse(inbound.params), CORPUS_WORKSPACE),
          });
        } else if (inbound.method === DROID_METHODS.askUser) {
          entries.push({ line, ask: buildQuestionAsk(String(inbound.id), AskUserParamsSchema.parse(inbound.params), CORPUS_WORKSPACE) });
        } else {
          fail(line, `no mapping for server request ${inbound.method}`);
        }
        break;
      }
      case 'response': {
        const method = sentMethods.get(String(inbound.id));
        if (method === undefined) fail(line, `response to an unknown request id ${inbound.id}`);
        if (method === DROID_METHODS.initializeSession) parseInitializeResult(inbound.result, CORPUS_CLI_VERSION);
        else if (method === DROID_METHODS.loadSession) {
          record(line, projector.projectHistory(parseLoadResult(inbound.result, CORPUS_CLI_VERSION).session.messages), true);
        } else {
          const schema = RESULT_SCHEMAS.get(method as never);
          if (schema && !schema.safeParse(inbound.result).success) fail(line, `result of ${method} does not match its schema`);
        }
        break;
      }
      case 'error':
        break;
    }
  }
  for (const draft of projector.closeOpenSpans('capture ended')) entries.push({ line: 'end', event: draft });
  return { entries, frames, projector };
}

/** One entry a line, so a reviewer can read and diff the expected file. */
export function formatEntries(entries: readonly CorpusEntry[]): string {
  return `[\n${entries.map((e) => JSON.stringify(e)).join(',\n')}\n]\n`;
}
