import type { RequestDescriptor } from '../../core/protocol/types.js';
import {
  AddUserMessageParamsSchema,
  CloseSessionParamsSchema,
  EmptyParamsSchema,
  EmptyResultSchema,
  ForkSessionParamsSchema,
  ForkSessionResultSchema,
  InitializeSessionParamsSchema,
  InitializeSessionResultSchema,
  ListMcpServersResultSchema,
  ListModelsParamsSchema,
  ListModelsResultSchema,
  ListToolsParamsSchema,
  ListToolsResultSchema,
  LoadSessionParamsSchema,
  LoadSessionResultSchema,
  RenameSessionParamsSchema,
  RenameSessionResultSchema,
  UpdateSessionSettingsParamsSchema,
} from './wire.js';

/**
 * droid's wire method names: the only place they are spelled. Keys are camelCase verbs
 * (`initialize_session` → `initializeSession`).
 */
export const DROID_METHODS = {
  initializeSession: 'droid.initialize_session',
  loadSession: 'droid.load_session',
  updateSessionSettings: 'droid.update_session_settings',
  addUserMessage: 'droid.add_user_message',
  interruptSession: 'droid.interrupt_session',
  closeSession: 'droid.close_session',
  listModels: 'droid.list_models',
  listTools: 'droid.list_tools',
  listMcpServers: 'droid.list_mcp_servers',
  renameSession: 'droid.rename_session',
  forkSession: 'droid.fork_session',
  listCommands: 'droid.list_commands',
  /** droid → client request. */
  requestPermission: 'droid.request_permission',
  /** droid → client request. */
  askUser: 'droid.ask_user',
  /** The only notification method droid sends. */
  sessionNotification: 'droid.session_notification',
} as const;

export type DroidMethod = (typeof DROID_METHODS)[keyof typeof DROID_METHODS];

function describe<P, R>(
  method: DroidMethod,
  params: RequestDescriptor<P, R>['params'],
  result: RequestDescriptor<P, R>['result'],
): RequestDescriptor<P, R> {
  return Object.freeze({ method, params, result });
}

/** Starts a new native session. Result: `{sessionId, session:{messages}, settings, availableModels}`. */
export const InitializeSession = describe(DROID_METHODS.initializeSession, InitializeSessionParamsSchema, InitializeSessionResultSchema);
/** Loads an existing native session; `-32004 Session not found` for an unknown id (never replace it). */
export const LoadSession = describe(DROID_METHODS.loadSession, LoadSessionParamsSchema, LoadSessionResultSchema);
/** Flat settings; answered `{}` after 1–3 `settings_updated` notifications. */
export const UpdateSessionSettings = describe(DROID_METHODS.updateSessionSettings, UpdateSessionSettingsParamsSchema, EmptyResultSchema);
/** `{}` means "accepted", not "done": the turn ends with `agent_turn_completed`. */
export const AddUserMessage = describe(DROID_METHODS.addUserMessage, AddUserMessageParamsSchema, EmptyResultSchema);
/** Stops the running turn (no-op when idle). */
export const InterruptSession = describe(DROID_METHODS.interruptSession, EmptyParamsSchema, EmptyResultSchema);
/** Answered `{}`; the process then exits by itself. */
export const CloseSession = describe(DROID_METHODS.closeSession, CloseSessionParamsSchema, EmptyResultSchema);
export const ListModels = describe(DROID_METHODS.listModels, ListModelsParamsSchema, ListModelsResultSchema);
export const ListTools = describe(DROID_METHODS.listTools, ListToolsParamsSchema, ListToolsResultSchema);
export const ListMcpServers = describe(DROID_METHODS.listMcpServers, EmptyParamsSchema, ListMcpServersResultSchema);
export const RenameSession = describe(DROID_METHODS.renameSession, RenameSessionParamsSchema, RenameSessionResultSchema);
/** Writes a copy; the live process stays on the original session until `load_session(newSessionId)`. */
export const ForkSession = describe(DROID_METHODS.forkSession, ForkSessionParamsSchema, ForkSessionResultSchema);
/** The slash commands of the session (`{commands:[…]}`); cheap, so also the liveness ping of a warm droid. */
export const ListCommands = describe(DROID_METHODS.listCommands, EmptyParamsSchema, EmptyResultSchema);
