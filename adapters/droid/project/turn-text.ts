import { BLOCK_SEPARATOR } from './content.js';

interface Entry {
  text: string;
  committed: boolean;
  lastBlock: number | undefined;
}

interface Turn {
  id: string | undefined;
  /** Assistant messages of the turn in order of first appearance. */
  messages: Map<string, Entry>;
}

/** How many finished turns keep their text for `text(turnId)`. */
const FINISHED_TURNS_KEPT = 16;

/**
 * The assistant text of each turn: the text of the turn's last assistant message that has any,
 * taken from its committed `create_message` when there is one and from its streamed deltas
 * otherwise (a turn interrupted mid-stream). Retracted deltas (`assistant_message_retracted`)
 * are discarded.
 */
export class TurnText {
  #current: Turn | undefined;
  readonly #finished = new Map<string, string>();

  /** Starts a turn explicitly (the session knows the message id it submits). */
  begin(turnId: string): void {
    this.#current = { id: turnId, messages: new Map() };
  }

  /** A visible user message: starts a turn when none is open; names an open turn that has no id yet. */
  userMessage(messageId: string): void {
    if (!this.#current) this.#current = { id: messageId, messages: new Map() };
    else this.#current.id ??= messageId;
  }

  /** Streamed text of an assistant message; ignored outside a turn. */
  delta(messageId: string, blockIndex: number | undefined, text: string): void {
    const entry = this.#entry(messageId);
    if (!entry || entry.committed) return;
    if (entry.text.length > 0 && blockIndex !== undefined && entry.lastBlock !== undefined && blockIndex !== entry.lastBlock) {
      entry.text += BLOCK_SEPARATOR;
    }
    entry.text += text;
    entry.lastBlock = blockIndex;
  }

  retract(messageId: string): void {
    this.#current?.messages.delete(messageId);
  }

  /** A committed assistant message; ignored outside a turn (e.g. messages a client appended with `append_messages`). */
  committed(messageId: string, text: string): void {
    const entry = this.#entry(messageId);
    if (!entry) return;
    entry.text = text;
    entry.committed = true;
  }

  /** Ends the current turn and returns its id (the native `turnId` wins) and text. */
  complete(turnId: string | undefined): { turnId: string | undefined; text: string } {
    const id = turnId ?? this.#current?.id;
    const text = textOf(this.#current);
    this.#current = undefined;
    if (id !== undefined) {
      this.#finished.delete(id);
      this.#finished.set(id, text);
      if (this.#finished.size > FINISHED_TURNS_KEPT) this.#finished.delete(this.#finished.keys().next().value!);
    }
    return { turnId: id, text };
  }

  /** The text of the given turn (current or recently finished), or of the current turn; `''` when unknown. */
  text(turnId?: string): string {
    if (this.#current && (turnId === undefined || this.#current.id === turnId)) return textOf(this.#current);
    return turnId === undefined ? '' : (this.#finished.get(turnId) ?? '');
  }

  #entry(messageId: string): Entry | undefined {
    if (!this.#current) return undefined;
    let entry = this.#current.messages.get(messageId);
    if (!entry) {
      entry = { text: '', committed: false, lastBlock: undefined };
      this.#current.messages.set(messageId, entry);
    }
    return entry;
  }
}

function textOf(turn: Turn | undefined): string {
  if (!turn) return '';
  const entries = [...turn.messages.values()];
  for (let i = entries.length - 1; i >= 0; i -= 1) if (entries[i]!.text.length > 0) return entries[i]!.text;
  return '';
}
