export { SessionRunner } from './session-runner.js';
export type { SessionRuntime, NewSessionOptions } from './session-runner.js';
export { RENAME_TIMEOUT_MS } from './rename-native.js';
export { EventSink } from './event-sink.js';
export type { EventListener, EventSinkTarget } from './event-sink.js';
export { launchInSandbox } from './launch.js';
export type { LaunchContext } from './launch.js';
export { probeCli } from './probe.js';
export { recoverInterruptedRuns } from './recover.js';
