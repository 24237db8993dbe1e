export { canonicalWorkspace, isWithin, treesOverlap } from './canonical-workspace.js';
export { checkApproved } from './check-approved.js';
export type { ApprovalSource } from './check-approved.js';
export { isolationFor, type Isolation, type IsolationDefaults } from './root-isolation.js';
