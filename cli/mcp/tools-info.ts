import { z } from 'zod';
import { AdapterInput, adapterOrDefault, SessionIdInput } from './inputs.js';
import { AutonomySchema, CatalogModelOutSchema, UsageOutSchema } from './schemas.js';
import { defineTool, type AnyMcpTool } from './tool.js';

/** Tools that describe what the orchestrator offers: workspaces, capacity, models, usage. */
export const INFO_TOOLS: readonly AnyMcpTool[] = [
  defineTool({
    name: 'list_workspaces',
    description:
      "The approved workspace roots (a session's workspace must be inside one), the capacity (limits and current activity) and, per adapter, the defaults a new session starts with (model, effort, autonomy).",
    input: z.strictObject({}),
    output: z.object({
      approvedRoots: z.array(z.string()).describe('absolute paths; workspaces must be inside one of them'),
      capacity: z.object({
        limits: z.object({
          maxConcurrentRuns: z.number().int(),
          maxQueuedTotal: z.number().int(),
          maxQueuedPerSession: z.number().int(),
          runTimeoutMs: z.number(),
          cancelGraceMs: z.number(),
        }),
        activity: z.object({ live: z.number().int(), queued: z.number().int() }),
      }),
      adapters: z
        .array(z.object({ name: z.string(), model: z.string().optional(), effort: z.string().optional(), autonomy: AutonomySchema }))
        .describe('policy defaults of a new session, per adapter'),
    }),
    readOnly: true,
    async run(orchestrator) {
      const info = await orchestrator.info();
      const result = {
        approvedRoots: info.approvedRoots,
        capacity: { limits: info.limits, activity: info.activity },
        adapters: info.adapters,
      };
      const text = [
        `approved roots: ${info.approvedRoots.join(', ') || '(none)'}`,
        `capacity: ${info.activity.live}/${info.limits.maxConcurrentRuns} live, ${info.activity.queued}/${info.limits.maxQueuedTotal} queued`,
        ...info.adapters.map((a) => `${a.name}: model ${a.model ?? 'default'}, effort ${a.effort ?? 'default'}, autonomy ${a.autonomy}`),
      ].join('\n');
      return { result, text };
    },
  }),
  defineTool({
    name: 'models',
    description:
      "The models an adapter's CLI offers right now (live catalog, cached briefly), with the reasoning efforts each accepts. Pass a model id to create_session or send_message.",
    input: z.strictObject({ adapter: AdapterInput }),
    output: z.object({ adapter: z.string(), models: z.array(CatalogModelOutSchema) }),
    readOnly: true,
    async run(orchestrator, args) {
      const adapter = await adapterOrDefault(orchestrator, args.adapter);
      const models = await orchestrator.models(adapter);
      const text = models
        .map((m) => `${m.id}${m.disabled ? ' (disabled)' : ''}${m.efforts.length ? ` efforts: ${m.efforts.join('/')}` : ''}`)
        .join('\n');
      return { result: { adapter, models }, text: text || `no models listed for ${adapter}` };
    },
  }),
  defineTool({
    name: 'usage',
    description: 'Token usage summed over the runs that reported it, in total and per session (all sessions when none are given).',
    input: z.strictObject({
      sessions: z.array(SessionIdInput).min(1).max(500).optional().describe('the sessions to count (default: all)'),
    }),
    output: z.object({
      total: UsageOutSchema,
      sessions: z.array(z.object({ sessionId: z.string(), runs: z.number().int(), usage: UsageOutSchema })),
    }),
    readOnly: true,
    async run(orchestrator, { sessions }) {
      const report = await orchestrator.usage(sessions);
      const t = report.total;
      const text = t.reported
        ? `input ${t.inputTokens ?? 0}, output ${t.outputTokens ?? 0} tokens over ${report.sessions.length} session(s)`
        : 'no usage reported';
      return { result: report, text };
    },
  }),
];
