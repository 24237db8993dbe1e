import { randomUUID } from 'node:crypto';
import type { FakeDroidConfig } from './fake-droid-config.js';
import {
  AUTONOMY_LEVELS,
  REASONING_EFFORTS,
  autonomyModeOf,
  defaultSettings,
  readSession,
  writeSession,
  zeroUsage,
} from './fake-droid-store.js';
import type { FakeSession } from './fake-droid-store.js';
import { playFakeTurn } from './fake-droid-turn.js';
import type { FakeWire, Inbound } from './fake-droid-wire.js';

type Outcome = { result: unknown } | { error: { code: number; message: string } };
type Params = Record<string, unknown>;

const NO_SESSION = { code: -32603, message: 'No active session. Call initialize_session or load_session first.' };
const HOST_ID = '00000000-0000-4000-8000-00000000f4ce';
const AVAILABLE_MODELS = [
  {
    id: 'gpt-5.6-sol',
    modelId: 'gpt-5.6-sol',
    modelProvider: 'openai',
    displayName: 'GPT 5.6 Sol',
    shortDisplayName: 'GPT 5.6 Sol',
    supportedReasoningEfforts: ['low', 'medium', 'high'],
    defaultReasoningEffort: 'high',
    deprecated: false,
    noImageSupport: false,
    isCustom: false,
  },
  {
    id: 'gpt-5.6-sol-mini',
    modelId: 'gpt-5.6-sol-mini',
    modelProvider: 'openai',
    displayName: 'GPT 5.6 Sol Mini',
    shortDisplayName: 'GPT 5.6 Sol Mini',
    supportedReasoningEfforts: ['low', 'high'],
    defaultReasoningEffort: 'low',
    deprecated: false,
    noImageSupport: false,
    isCustom: false,
  },
];
// Methods of droid 0.225.2 that this fake does not play; they fail loudly instead of pretending.
const UNSIMULATED = new Set(
  ['fork_session', 'compact_session', 'rename_session', 'list_skills', 'list_commands']
    .concat(['list_mcp_servers', 'list_mcp_tools', 'append_messages', 'change_working_directory', 'get_context_stats'])
    .map((name) => `droid.${name}`),
);

// Mirrors droid's zod error text: "Invalid request for droid.x: params.cwd: Required".
function invalid(method: string, path: string, problem: string): Outcome {
  return { error: { code: -32602, message: `Invalid request for ${method}: ${path}: ${problem}` } };
}

// Checks that params is an object holding the required string fields.
function checkParams(method: string, params: unknown, required: string[]): { params: Params } | { failure: Outcome } {
  const fail = (path: string, problem: string): { failure: Outcome } => ({ failure: invalid(method, path, problem) });
  if (params === undefined) return fail('params', 'Required');
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    return fail('params', `Expected object, received ${Array.isArray(params) ? 'array' : typeof params}`);
  }
  for (const key of required) {
    const value = (params as Params)[key];
    if (value === undefined) return fail(`params.${key}`, 'Required');
    if (typeof value !== 'string') return fail(`params.${key}`, `Expected string, received ${typeof value}`);
  }
  return { params: params as Params };
}

const isAutonomyLevel = (value: unknown): value is string => typeof value === 'string' && AUTONOMY_LEVELS.includes(value);

/**
 * The fake droid's request handling: one current session, at most one live turn, sessions
 * persisted under `$HOME/.fake-droid/sessions`. `onIdle` fires after the last turn ends.
 */
export class FakeDroid {
  #wire: FakeWire;
  #config: FakeDroidConfig;
  #session: FakeSession | undefined;
  #turn: { abort: AbortController; done: Promise<unknown> } | undefined;
  #announcedMcp = false;
  /** Set by close_session: the process should exit. */
  closing = false;

  constructor(wire: FakeWire, config: FakeDroidConfig) {
    this.#wire = wire;
    this.#config = config;
  }

  /** Resolves when no turn is running. */
  async idle(): Promise<void> {
    while (this.#turn !== undefined) await this.#turn.done;
  }

  handle(frame: Inbound): void {
    if (frame.type !== 'request') return; // Client notifications and stray responses are ignored, as droid does.
    const outcome = this.#dispatch(frame.id, frame.method, frame.params);
    if (outcome !== undefined) this.#wire.respond(frame.id, outcome);
  }

  #announce(): void {
    // Once per process, early, like droid (before the first init/load response).
    if (this.#announcedMcp) return;
    this.#announcedMcp = true;
    const summary = { total: 0, connected: 0, connecting: 0, failed: 0, disabled: 0 };
    this.#wire.notify({ type: 'mcp_status_changed', servers: [], summary });
  }

  #settingsUpdated(requestId?: string): void {
    const settings = (this.#session as FakeSession).settings;
    const notification =
      requestId === undefined ? { type: 'settings_updated', settings } : { type: 'settings_updated', requestId, settings };
    this.#wire.notify(notification);
  }

  #save(): void {
    if (this.#session === undefined) return;
    this.#session.updatedAt = Date.now();
    writeSession(this.#session);
  }

  // Returns the response outcome, or undefined when the handler already responded.
  #dispatch(id: string, method: string, rawParams: unknown): Outcome | undefined {
    switch (method) {
      case 'droid.initialize_session': {
        const checked = checkParams(method, rawParams, ['machineId', 'cwd']);
        if ('failure' in checked) return checked.failure;
        const params = checked.params;
        const settings = defaultSettings();
        if (typeof params.modelId === 'string') settings.modelId = params.modelId;
        if (isAutonomyLevel(params.autonomyLevel)) settings.autonomyLevel = params.autonomyLevel;
        settings.autonomyMode = autonomyModeOf(settings);
        const sessionId = typeof params.sessionId === 'string' ? params.sessionId : randomUUID();
        const cwd = String(params.cwd);
        this.#session = { sessionId, cwd, settings, messages: [], tokenUsage: zeroUsage(), updatedAt: Date.now() };
        this.#save();
        this.#announce();
        this.#settingsUpdated();
        if (this.#config.faults.has('malformed-init')) return { result: { hostId: HOST_ID } };
        const session = { messages: [] };
        return { result: { sessionId, hostId: HOST_ID, session, settings, availableModels: AVAILABLE_MODELS } };
      }
      case 'droid.load_session': {
        const checked = checkParams(method, rawParams, ['sessionId']);
        if ('failure' in checked) return checked.failure;
        const params = checked.params;
        const stored = readSession(String(params.sessionId));
        if (stored === undefined) return { error: { code: -32004, message: 'Session not found' } };
        this.#session = stored;
        this.#announce();
        this.#settingsUpdated();
        // Like droid: no sessionId in a load_session result.
        const result = {
          session: { messages: stored.messages },
          hasOlderMessages: false,
          hostId: HOST_ID,
          updatedAt: Math.floor(stored.updatedAt / 1000),
          settings: stored.settings,
          availableModels: AVAILABLE_MODELS,
          isAgentLoopInProgress: false,
          workingState: 'idle',
          cwd: stored.cwd,
          tokenUsage: stored.tokenUsage,
        };
        return { result };
      }
      case 'droid.update_session_settings': {
        const checked = checkParams(method, rawParams, []);
        if ('failure' in checked) return checked.failure;
        const params = checked.params;
        if (this.#session === undefined) return { error: NO_SESSION };
        const effort = params.reasoningEffort;
        if (effort !== undefined && (typeof effort !== 'string' || !REASONING_EFFORTS.includes(effort))) {
          const expected = REASONING_EFFORTS.map((name) => `'${name}'`).join(' | ');
          return invalid(method, 'params.reasoningEffort', `Invalid enum value. Expected ${expected}, received '${String(effort)}'`);
        }
        if (typeof params.modelId === 'string' && this.#config.faults.has('model-blocked')) {
          return { error: { code: -32600, message: `Model ${params.modelId} is not allowed by your organization's policy` } };
        }
        const settings = this.#session.settings;
        if (typeof params.modelId === 'string') {
          settings.modelId = params.modelId;
          if (params.modelId.startsWith('custom:')) settings.reasoningEffort = 'none';
          this.#settingsUpdated();
        }
        if (typeof effort === 'string') settings.reasoningEffort = effort;
        // An invalid autonomyLevel is ignored silently, as droid does.
        if (isAutonomyLevel(params.autonomyLevel)) settings.autonomyLevel = params.autonomyLevel;
        if (typeof params.interactionMode === 'string') settings.interactionMode = params.interactionMode;
        settings.autonomyMode = autonomyModeOf(settings);
        this.#save();
        this.#settingsUpdated(id);
        return { result: {} };
      }
      case 'droid.add_user_message':
        return this.#addUserMessage(id, method, rawParams);
      case 'droid.interrupt_session':
        this.#turn?.abort.abort();
        return { result: {} };
      case 'droid.close_session':
        this.closing = true;
        this.#turn?.abort.abort();
        return { result: {} };
      case 'droid.list_models':
        return { result: { models: AVAILABLE_MODELS.map((model) => ({ ...model, disabled: false })) } };
      // The fake runs no tools, so it lists none (a catalog listing asks for models and tools).
      case 'droid.list_tools':
        if (this.#config.faults.has('list-tools-fails'))
          return { error: { code: -32603, message: `fake-droid does not simulate ${method}` } };
        return { result: { tools: [] } };
      default:
        if (UNSIMULATED.has(method)) {
          return { error: { code: -32603, message: `fake-droid does not simulate ${method}` } };
        }
        return { error: { code: -32601, message: `Unknown method: ${method}` } };
    }
  }

  #addUserMessage(id: string, method: string, rawParams: unknown): Outcome | undefined {
    const checked = checkParams(method, rawParams, ['text']);
    if ('failure' in checked) return checked.failure;
    const params = checked.params;
    this.#wire.respond(id, { result: {} });
    if (this.#session === undefined) {
      // droid 0.225.2 quirk: `{}` first, then a second response with the same id carrying the error.
      this.#wire.respond(id, { error: NO_SESSION });
      return undefined;
    }
    if (this.#config.faults.has('silence')) {
      this.#wire.mute();
      return undefined;
    }
    if (this.#turn !== undefined) return undefined; // Absorbed into the running turn: one completion only.
    const abort = new AbortController();
    const session = this.#session;
    const turnId = typeof params.messageId === 'string' ? params.messageId : randomUUID();
    const text = String(params.text);
    const done = playFakeTurn({ wire: this.#wire, config: this.#config, session, signal: abort.signal, requestId: id, text, turnId })
      .catch((error: unknown) => process.stderr.write(`fake-droid: turn failed: ${String(error)}\n`))
      .finally(() => {
        this.#turn = undefined;
        writeSession(session);
      });
    this.#turn = { abort, done };
    return undefined;
  }
}
