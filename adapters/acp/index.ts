export { DroidAcpBlockSchema, droidAcpAdapter } from './droid-acp.js';
export type { DroidAcpConfig } from './droid-acp.js';
export { ACP_API, AcpSession } from './session.js';
export type { AcpAgentProfile } from './session.js';
export { AcpConfigSchema, acpAgentName, acpCommandAdapter } from './command.js';
export type { AcpConfig } from './command.js';
export { GeminiConfigSchema, geminiAdapter } from './gemini.js';
export type { GeminiConfig } from './gemini.js';
