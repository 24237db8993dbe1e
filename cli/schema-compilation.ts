import { z } from 'zod';

/**
 * Turns zod's JIT off for this process: zod then parses every object schema on its plain path
 * instead of compiling a parser for it (`new Function`) on its first parse. Set before the
 * command builds its (lazy) schemas.
 *
 * A `run` or `send` parses each of its schemas once or a few times (the config, a session record,
 * a turn handle, the events it missed): the compilation costs such a process more than it saves.
 * The orchestrator (`serve`) parses many values, but the parses on a turn's path (droid's frames,
 * records, events) go through quick checks (core/schema-check.ts) or see few values of each
 * shape, so compiling saves it nothing measurable either (the pipeline bench runs as fast without
 * it), while the compilations themselves fall on the first turns of a fresh orchestrator, the
 * CPU its agent needs to start (issue 15: ~30 ms of the orchestrator's CPU in the first `run`).
 * Validation is the same either way: the same schemas, the same results and messages.
 */
export function withoutSchemaCompilation(): void {
  z.config({ jitless: true });
}
