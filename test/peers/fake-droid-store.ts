import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The settings object droid reports in results and `settings_updated` (flat, like 0.225.2). */
export interface FakeSettings {
  modelId: string;
  reasoningEffort: string;
  autonomyMode: string;
  interactionMode: string;
  autonomyLevel: string;
  availableAutonomyLevels: string[];
  compactionThresholdCheckEnabled: boolean;
}

export interface FakeTokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  thinkingTokens: number;
  factoryCredits: number;
}

/** One persisted conversation: what load_session needs in a later process. */
export interface FakeSession {
  sessionId: string;
  cwd: string;
  settings: FakeSettings;
  messages: Record<string, unknown>[];
  tokenUsage: FakeTokenUsage;
  updatedAt: number;
}

export const AUTONOMY_LEVELS = ['off', 'low', 'medium', 'high'];
export const REASONING_EFFORTS = ['none', 'dynamic', 'off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/** The defaults droid 0.225.2 reports for a new session with an empty settings.json. */
export function defaultSettings(): FakeSettings {
  return {
    modelId: 'gpt-5.6-sol',
    reasoningEffort: 'high',
    autonomyMode: 'normal',
    interactionMode: 'auto',
    autonomyLevel: 'off',
    availableAutonomyLevels: [...AUTONOMY_LEVELS],
    compactionThresholdCheckEnabled: true,
  };
}

/** Derived like droid does: spec mode → "spec", autonomy off → "normal", else "auto-<level>". */
export function autonomyModeOf(settings: FakeSettings): string {
  if (settings.interactionMode === 'spec') return 'spec';
  return settings.autonomyLevel === 'off' ? 'normal' : `auto-${settings.autonomyLevel}`;
}

export function zeroUsage(): FakeTokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0, thinkingTokens: 0, factoryCredits: 0 };
}

// Sessions live under $HOME like droid's own, so a second process with the same HOME finds them.
function sessionsDir(): string {
  return join(process.env.HOME ?? homedir(), '.fake-droid', 'sessions');
}

function sessionFile(sessionId: string): string {
  return join(sessionsDir(), `${encodeURIComponent(sessionId)}.json`);
}

/** Reads a stored session; undefined when there is none (load_session then answers -32004). */
export function readSession(sessionId: string): FakeSession | undefined {
  try {
    return JSON.parse(readFileSync(sessionFile(sessionId), 'utf8')) as FakeSession;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Writes the session atomically (temp file, rename). */
export function writeSession(session: FakeSession): void {
  mkdirSync(sessionsDir(), { recursive: true, mode: 0o700 });
  const file = sessionFile(session.sessionId);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(session), { mode: 0o600 });
  renameSync(temp, file);
}
