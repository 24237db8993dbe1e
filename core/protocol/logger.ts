/** Where the protocol layer writes its diagnostics. The default writes nothing. */
export interface ProtocolLogger {
  debug(message: string, data?: Record<string, unknown>): void;
}

/** A logger that drops everything (vscode's NullLogger). */
export const NULL_LOGGER: ProtocolLogger = {
  debug(): void {},
};
