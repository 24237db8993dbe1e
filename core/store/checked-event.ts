import { ERROR_CODES, OneWorksError } from '../errors.js';
import { isValidRuntimeEvent, RuntimeEventSchema, type RuntimeEvent } from '../events/index.js';

// Validates an event before it becomes durable: a bad one is a bug upstream, not corrupt state.
// The quick check passes what the schema would accept (nearly every event) without the schema
// building a copy of it; anything it is unsure of goes through the schema.
export function checkedEvent(sessionId: string, event: RuntimeEvent): RuntimeEvent {
  if (event.sessionId === sessionId && isValidRuntimeEvent(event)) return event;
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
