import type { z } from 'zod';
import { compileQuickCheck, type QuickCheck } from '../../../core/schema-check.js';
import {
  DroidTextBlockSchema,
  DroidThinkingBlockSchema,
  DroidToolResultBlockSchema,
  DroidToolUseSchema,
  type DroidMessage,
  type DroidToolUse,
} from '../wire.js';

// Quick checks compiled from the block schemas (core/schema-check.ts): a block that passes is
// read as it came; anything else goes through the schema. The parts read are fields only.
const isTextBlock = compileQuickCheck(DroidTextBlockSchema);
const isThinkingBlock = compileQuickCheck(DroidThinkingBlockSchema);
const isToolUseBlock = compileQuickCheck(DroidToolUseSchema);

// The block as the schema reads it, or undefined when the schema refuses it.
function readBlock<T>(schema: z.ZodType<T>, quick: QuickCheck, block: unknown): T | undefined {
  if (quick(block)) return block as T;
  const parsed = schema.safeParse(block);
  return parsed.success ? parsed.data : undefined;
}

/** The parts of a droid message the projection uses. */
export interface MessageParts {
  /** Text blocks joined by a blank line. */
  text: string;
  /** Thinking blocks joined by a blank line. */
  thinking: string;
  toolUses: DroidToolUse[];
  toolResults: Array<{ toolUseId: string; isError: boolean; output: string }>;
}

/** Joins text blocks: separate blocks are separate paragraphs (text, tool_use, text…). */
export const BLOCK_SEPARATOR = '\n\n';

/** Reads the blocks of a message; unknown block types (image, document, redacted_thinking) are skipped. */
export function readMessage(message: DroidMessage): MessageParts {
  const parts: MessageParts = { text: '', thinking: '', toolUses: [], toolResults: [] };
  const content = message.content;
  if (typeof content === 'string') return { ...parts, text: content };
  const texts: string[] = [];
  const thoughts: string[] = [];
  for (const block of content ?? []) {
    if (block.type === 'text') {
      const text = readBlock(DroidTextBlockSchema, isTextBlock, block)?.text;
      if (text !== undefined && text.length > 0) texts.push(text);
    } else if (block.type === 'thinking') {
      const thinking = readBlock(DroidThinkingBlockSchema, isThinkingBlock, block)?.thinking;
      if (thinking !== undefined && thinking.length > 0) thoughts.push(thinking);
    } else if (block.type === 'tool_use') {
      const use = readBlock(DroidToolUseSchema, isToolUseBlock, block);
      if (use !== undefined) parts.toolUses.push(use);
    } else if (block.type === 'tool_result') {
      const parsed = DroidToolResultBlockSchema.safeParse(block);
      const toolUseId = parsed.success ? (parsed.data.toolUseId ?? parsed.data.tool_use_id) : undefined;
      if (parsed.success && toolUseId !== undefined) {
        const isError = parsed.data.isError ?? parsed.data.is_error ?? false;
        parts.toolResults.push({ toolUseId, isError, output: outputText(parsed.data.content) });
      }
    }
  }
  parts.text = texts.join(BLOCK_SEPARATOR);
  parts.thinking = thoughts.join(BLOCK_SEPARATOR);
  return parts;
}

/**
 * Hidden context messages are dropped from events on purpose: `visibility:"llm_only"` marks
 * droid's own system-reminder context (`context-<id>`, `__internal__system-reminder__<uuid>`),
 * which `load_session` returns in full and which is not part of the conversation a person sees.
 */
export function isHiddenMessage(message: DroidMessage): boolean {
  return message.visibility === 'llm_only';
}

/** Tool output as text: a string as is, text blocks joined, anything else as JSON. */
export function outputText(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const block of content) {
      const text = readBlock(DroidTextBlockSchema, isTextBlock, block)?.text;
      if (text !== undefined) texts.push(text);
    }
    if (texts.length === content.length) return texts.join(BLOCK_SEPARATOR);
  }
  return JSON.stringify(content);
}

/** True for a tool input with at least one field (the first `tool_call` sighting has `{}`). */
export function hasInput(input: unknown): boolean {
  if (input === undefined || input === null) return false;
  if (typeof input === 'object' && !Array.isArray(input)) return Object.keys(input).length > 0;
  return true;
}
