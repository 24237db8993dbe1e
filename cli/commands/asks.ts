import type { Command } from 'commander';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import { AskChoiceSchema, type OpenAsk } from '../../core/permissions/index.js';
import { assertFileBackend, isFleet } from '../fleet/backend.js';
import { onFleet } from '../fleet/person-request.js';
import { createContext } from '../context.js';
import { socketPath } from '../daemon/wire.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

// Commander collector of a repeatable option.
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * `asks [SESSION]`, `answer ASK allow|allow-session|deny [--text T]` and `sessions resolve`:
 * answering a session's escalated asks from any shell. Asks live in the running orchestrator;
 * `asks` and `answer` never start one (without one, nothing is open).
 */
export function registerAskCommands(program: Command, sessions: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('asks')
    .description('list the permission asks and questions waiting for an answer (all sessions, or one)')
    .argument('[session]', 'session id')
    .action((sessionId: string | undefined, _o: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false });
        assertFileBackend(ctx);
        const client = await (await import('../daemon/client.js')).tryConnect(socketPath(ctx.stateDir));
        const asks = client ? await client.listAsks(sessionId).finally(() => client.close()) : [];
        if (ctx.out.json) for (const ask of asks) ctx.out.record(ask);
        else if (asks.length === 0) ctx.out.line(client ? 'no open asks' : 'no open asks (no orchestrator is running)');
        else for (const ask of asks) ctx.out.line(askLines(ask));
        return EXIT.ok;
      }),
    );

  program
    .command('answer')
    .description('answer an open ask: allow (once), allow-session (the same call, for the rest of the session) or deny')
    .argument('<ask>', 'ask id (see `one-works asks`)')
    .argument('<choice>', 'allow | allow-session | deny')
    .option('--text <text>', "a question's answer (repeat once per question, in order; a number picks an option), or a note", collect, [])
    .action((askId: string, choice: string, flags: { text: string[] }, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false });
        assertFileBackend(ctx);
        const parsed = AskChoiceSchema.safeParse(choice);
        if (!parsed.success)
          throw new OneWorksError(ERROR_CODES.USAGE, `choice must be allow, allow-session or deny (got ${JSON.stringify(choice)})`);
        const client = await (await import('../daemon/client.js')).tryConnect(socketPath(ctx.stateDir));
        if (!client)
          throw new OneWorksError(ERROR_CODES.ASK_NOT_FOUND, `no open ask ${askId}: no orchestrator is running for ${ctx.stateDir}`);
        try {
          const answered = await client.answerAsk({
            askId,
            choice: parsed.data,
            channel: 'cli',
            ...(flags.text.length > 0 ? { text: flags.text } : {}),
          });
          ctx.out.result(answered, () => `${askId} (session ${answered.sessionId}): ${answered.choice}`);
          return EXIT.ok;
        } catch (error) {
          // With --json a refused answer is also a record on stdout, with its stable code and facts (who answered).
          if (ctx.out.json && isOneWorksError(error))
            ctx.out.record({ error: { code: error.code, message: ctx.out.redact(error.message), ...(error.data ?? {}) } });
          throw error;
        } finally {
          await client.close();
        }
      }),
    );

  sessions
    .command('resolve')
    .description('clear needs-attention: a person has dealt with what the session reported (recorded as an event)')
    .argument('<id>', 'session id')
    .option('--note <text>', 'what was done, kept in the event')
    .action((sessionId: string, flags: { note?: string }, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false });
        if (isFleet(ctx)) {
          // On a fleet, the worker holding the session resolves it.
          const summary = await onFleet(ctx, (fleet) => fleet.resolveAttention(sessionId, flags.note));
          ctx.out.result(summary, () => `session ${sessionId}: ${summary.state}`);
          return EXIT.ok;
        }
        const client = await (await import('../daemon/connect-matching.js')).connectMatchingOrchestrator(ctx);
        try {
          const summary = await client.resolveAttention(sessionId, flags.note);
          ctx.out.result(summary, () => `session ${sessionId}: ${summary.state}`);
          return EXIT.ok;
        } finally {
          await client.close();
        }
      }),
    );
}

// An open ask for people: id, session, what the agent wants, why it was escalated, until when.
function askLines(ask: OpenAsk): string {
  const lines = [
    `${ask.askId}  session ${ask.sessionId}${ask.runId ? ` (${ask.runId})` : ''}  ${ask.kind === 'question' ? 'question' : 'permission'}`,
  ];
  if (ask.kind === 'question') {
    for (const q of ask.questions ?? []) {
      lines.push(`  ${q.topic ? `${q.topic}: ` : ''}${q.question}`);
      for (const [i, option] of q.options.entries()) lines.push(`    ${i + 1}) ${option}`);
    }
  }
  for (const tool of ask.kind === 'question' ? [] : ask.tools) {
    lines.push(`  • ${tool.label}${tool.impact ? `  (impact: ${tool.impact})` : ''}`);
    if (tool.command !== undefined && !tool.label.endsWith(tool.command)) lines.push(`    command: ${tool.command}`);
    if (tool.paths?.length) lines.push(`    paths: ${tool.paths.join(', ')}`);
  }
  lines.push(`  asked because ${ask.reason}`);
  if (ask.expiresAt) lines.push(`  declined at ${ask.expiresAt} unless answered`);
  const how = ask.kind === 'question' ? 'allow --text "…" | deny' : 'allow | allow-session | deny';
  lines.push(`  answer: one-works answer ${ask.askId} ${how}`);
  return lines.join('\n');
}
