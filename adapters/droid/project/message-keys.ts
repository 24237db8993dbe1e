import { droidEventKeys } from './keys.js';

/**
 * Keys of streamed deltas and committed assistant messages across retries. After `llm_retry`,
 * droid 0.225.2 sends `assistant_message_retracted` and streams the next attempt under the SAME
 * message id, so each retraction starts a new generation: delta keys carry it (an attempt's
 * deltas never collide with the previous attempt's at the same offset).
 *
 * A committed message keeps the plain `msg:<id>` key, which is also what `projectHistory` derives
 * from a `load_session` result, so a replayed message is recognised as already written. Only a
 * message committed, then retracted, then committed again gets `msg:<id>:r<generation>`: a
 * separate observation. (History holds only its last version, under the plain key, so a reload
 * keeps the first version in the log; droid was not observed to retract after committing.)
 */
export class MessageKeys {
  readonly #generation = new Map<string, number>();
  readonly #offsets = new Map<string, Map<string, number>>();
  readonly #firstCommit = new Map<string, number>();

  /** The key of one delta: message, block, generation and the running character offset of its block. */
  deltaKey(messageId: string, blockIndex: number, length: number): string {
    const generation = this.generation(messageId);
    let offsets = this.#offsets.get(messageId);
    if (!offsets) {
      offsets = new Map();
      this.#offsets.set(messageId, offsets);
    }
    const stream = `${blockIndex}:${generation}`;
    const offset = offsets.get(stream) ?? 0;
    offsets.set(stream, offset + length);
    return `delta:${messageId}:${stream}:${offset}`;
  }

  /** Starts a new generation for the message; returns it. */
  retract(messageId: string): number {
    const next = this.generation(messageId) + 1;
    this.#generation.set(messageId, next);
    return next;
  }

  /** The key of a committed message (and forgets its delta offsets). */
  commitKey(messageId: string): string {
    this.#offsets.delete(messageId);
    const generation = this.generation(messageId);
    const first = this.#firstCommit.get(messageId);
    if (first === undefined) this.#firstCommit.set(messageId, generation);
    if (first === undefined || first === generation) return droidEventKeys.message(messageId);
    return `${droidEventKeys.message(messageId)}:r${generation}`;
  }

  generation(messageId: string): number {
    return this.#generation.get(messageId) ?? 0;
  }
}
