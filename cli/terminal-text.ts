/**
 * Text for a terminal, made inert. Agent text (model output, tool output, commands, paths,
 * questions, titles, error messages that quote any of them) can carry control and escape
 * sequences that drive the terminal: OSC 52 writes the clipboard, CSI 2J clears the screen,
 * OSC 0 sets the window title, a bare CR overwrites the line. Every human-facing line the CLI
 * prints passes through {@link terminalSafe}; `--json` output is escaped by
 * {@link jsonTerminalSafe} instead, which keeps it exact JSON.
 */

// C0 controls but TAB and LF, DEL, C1 controls (U+0080–U+009F: 8-bit CSI, OSC, ST…), and the
// bidi embeddings, overrides and isolates that reorder what is shown ("Trojan Source").
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

// JSON.stringify escapes C0 controls itself; these it leaves raw.
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every control character except newline and tab shown visibly: C0 controls and
 * DEL as their Unicode control pictures (ESC as `␛`, BEL as `␇`, a bare CR as `␍`), C1
 * controls and bidi controls as `\uXXXX`. A CRLF becomes a newline. What follows an ESC is
 * then plain text, so no sequence reaches the terminal, whether it arrives whole or split
 * across streamed pieces. Printable text (any script, emoji) is unchanged.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    if (c === '\r\n') return '\n';
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return unicodeEscape(code);
  });
}

/**
 * A JSON text (from JSON.stringify) with the characters JSON leaves raw but a terminal may act
 * on (DEL, C1 controls, line/paragraph separators, bidi controls) written as `\uXXXX` escapes.
 * Only valid inside JSON strings, where these characters can occur: the value parses back
 * byte-exact.
 */
export function jsonTerminalSafe(json: string): string {
  return json.replace(JSON_UNSAFE, (c) => unicodeEscape(c.charCodeAt(0)));
}

function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}
