import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import { AutonomySchema } from '../store/index.js';

/** The settings a turn runs with, resolved once at acceptance (recorded on its run). */
export const EffectiveSettingsSchema = lazySchema(() =>
  z.strictObject({
    model: z.string().optional(),
    effort: z.string().optional(),
    autonomy: AutonomySchema,
  }),
);
export type EffectiveSettings = z.infer<typeof EffectiveSettingsSchema>;

/**
 * What accepting a turn returns: its ids, whether it is queued (waiting for admission) or
 * already running, and its settings. A request key replays the original handle, settings
 * included. The one definition of the shape: the control socket parses handles with it too.
 */
export const TurnHandleSchema = z.strictObject({
  sessionId: z.string().min(1),
  runId: z.string().min(1),
  state: z.enum(['queued', 'running']),
  settings: EffectiveSettingsSchema,
});
export type TurnHandle = z.infer<typeof TurnHandleSchema>;
