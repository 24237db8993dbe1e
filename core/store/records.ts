import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import { UsageSchema } from '../events/index.js';
import { PermissionPolicySchema } from '../permissions/index.js';

/**
 * Durable records of One Works, owned by the store. Schemas are strict: a record that does not
 * match is reported as `state_corrupt` and never rewritten.
 */

const IsoTimeSchema = lazySchema(() => z.iso.datetime({ offset: true }));

export const AutonomySchema = lazySchema(() => z.enum(['off', 'low', 'medium', 'high']));

export const RunStatusSchema = lazySchema(() =>
  z.enum(['queued', 'running', 'completed', 'failed', 'interrupted', 'unknown', 'cancelled']),
);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** One turn of a session, from queueing to its outcome. */
export const RunRecordSchema = lazySchema(() =>
  z.strictObject({
    id: z.string().min(1),
    prompt: z.string(),
    model: z.string().optional(),
    effort: z.string().optional(),
    autonomy: AutonomySchema,
    status: RunStatusSchema,
    /** Machine-readable reason of the outcome (native reason or a One Works code). */
    reason: z.string().optional(),
    startedAt: IsoTimeSchema.optional(),
    endedAt: IsoTimeSchema.optional(),
    /** The committed assistant text of the turn. */
    text: z.string().optional(),
    usage: UsageSchema.optional(),
    /**
     * How the agent ran the turn, when its adapter has more than one way (droid: `stream-jsonrpc`,
     * or `oneshot` after its live protocol failed); absent for adapters with one way.
     */
    mode: z.string().min(1).optional(),
  }),
);
export type RunRecord = z.infer<typeof RunRecordSchema>;

/**
 * The git worktree a worktree session works in (`run --worktree`): created by One Works in the
 * state directory on a branch of its own, at a base commit of the user's repository.
 */
export const WorktreeRecordSchema = lazySchema(() =>
  z.strictObject({
    /** Canonical root of the user's repository (its main working tree); approval applies to it. */
    repository: z.string().min(1),
    /** The base as the user named it (`--base`), or HEAD's branch, or `HEAD` when detached. */
    baseRef: z.string().min(1),
    /** The branch `merge` targets by default: the base when it is a branch. */
    baseBranch: z.string().min(1).optional(),
    /** The commit the worktree started at; `diff` compares against it. */
    baseCommit: z.string().regex(/^[0-9a-f]{40,64}$/),
    /** The session's branch (`ow/<session id>` unless named). */
    branch: z.string().min(1),
    /** The worktree's root (`<state>/worktrees/<session id>`). */
    path: z.string().min(1),
    /** git's administrative directory of this worktree (`<common dir>/worktrees/<name>`). */
    gitDir: z.string().min(1),
    /** The repository's common git directory (usually `<repository>/.git`). */
    commonDir: z.string().min(1),
    /** Set by `discard`: the worktree and the branch are gone. */
    discardedAt: IsoTimeSchema.optional(),
    /** Every `merge` of this session into the user's repository. */
    merges: z
      .array(z.strictObject({ into: z.string().min(1), commit: z.string().min(1), squash: z.boolean(), at: IsoTimeSchema }))
      .optional(),
  }),
);
export type WorktreeRecord = z.infer<typeof WorktreeRecordSchema>;

export const SessionStatusSchema = lazySchema(() => z.enum(['idle', 'working', 'needs_attention', 'failed', 'closed']));
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

/** A session: which adapter and workspace, what the native side is, and its runs. */
export const SessionRecordSchema = lazySchema(() =>
  z.strictObject({
    id: z.string().min(1),
    adapter: z.string().min(1),
    /** Canonical absolute workspace path. */
    workspace: z.string().min(1),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
    title: z.string().optional(),
    /** Caller-chosen tags (One Works metadata; also sent to the agent CLI where it has tags). */
    labels: z.array(z.string()).optional(),
    /** Hidden from default listings by callers that filter; the session itself is unchanged. */
    archived: z.boolean().optional(),
    nativeSessionId: z.string().optional(),
    cliVersion: z.string().optional(),
    /** Written by earlier versions only (droid's protocol); kept so their records still read. Version facts are on `session.started`. */
    protocolVersion: z.string().optional(),
    status: SessionStatusSchema,
    /** Why the session needs attention, in words a person can act on. */
    attention: z.array(z.string()).optional(),
    /** Turn settings chosen at creation, used by the first run. */
    pending: z
      .strictObject({ model: z.string().optional(), effort: z.string().optional(), autonomy: AutonomySchema.optional() })
      .optional(),
    /**
     * This session's additions to its adapter's permission policy (e.g. `run --allow/--deny`),
     * merged over the YAML policy by every process that runs the session's turns.
     */
    policy: PermissionPolicySchema.optional(),
    /**
     * Set on a fork (`one-works fork`): the session and run whose history it carries;
     * `checkpointRun` when it started from that run's native checkpoint (no transcript).
     */
    forkedFrom: z
      .strictObject({ sessionId: z.string().min(1), runId: z.string().min(1).optional(), checkpointRun: z.string().min(1).optional() })
      .optional(),
    /** Set on sessions read from an agent CLI's own records by `one-works import` (read-only source). */
    imported: z
      .strictObject({
        /** The record file it was read from (never written to). */
        source: z.string().min(1),
        importedAt: IsoTimeSchema,
        kind: z.enum(['top-level', 'sub-session', 'fork']),
        parentNativeSessionId: z.string().optional(),
        /** Members of the native records that One Works does not map, kept as they were. */
        nativeDetails: z.record(z.string(), z.unknown()),
      })
      .optional(),
    /**
     * Approvals a person gave "for this session" (permission keys such as `execute:npm test`):
     * every later turn, in any process, allows them without asking until the session ends.
     */
    sessionAllows: z.array(z.string()).optional(),
    runs: z.array(RunRecordSchema),
    /** A worktree session's git facts; `workspace` then lies inside `worktree.path`. */
    worktree: WorktreeRecordSchema.optional(),
  }),
);
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/** Content of `<state>/owner.json`: the one process that owns the state directory. */
export const OwnerRecordSchema = lazySchema(() =>
  z.strictObject({
    pid: z.number().int().positive(),
    host: z.string().min(1),
    startedAt: z.string().min(1),
    /** The process's start time in clock ticks since boot (Linux /proc/<pid>/stat), so a reused pid is not taken for the owner. */
    procStart: z.string().regex(/^\d+$/).optional(),
    /** The boot the owner ran in (Linux /proc/sys/kernel/random/boot_id). */
    bootId: z.string().min(1).optional(),
  }),
);
export type OwnerRecord = z.infer<typeof OwnerRecordSchema>;
