import { ERROR_CODES, OneWorksError } from '../errors.js';
import { RuntimeEventSchema, type RuntimeEvent } from '../events/index.js';

// Validates an event before it becomes durable: a bad one is a bug upstream, not corrupt state.
export function checkedEvent(sessionId: string, event: RuntimeEvent): RuntimeEvent {
  const parsed = RuntimeEventSchema.safeParse(event);
  if (!parsed.success || event.sessionId !== sessionId) {
    throw new OneWorksError(
      ERROR_CODES.INTERNAL,
      `refusing to append an invalid event (seq ${String(event.seq)}) to session ${sessionId}`,
      {
        data: { sessionId, seq: event.seq, type: event.type },
        ...(parsed.success ? {} : { cause: parsed.error }),
      },
    );
  }
  return event;
}
