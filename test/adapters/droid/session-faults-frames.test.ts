import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectNoProcessLeft, expectTurnRecorded, ofType, useSessionHarnesses } from '../../support/session-harness.js';

// Faults in the frame stream of a running turn: the codec and the connection stay usable and
// the turn still completes; each problem is recorded as an event.
const harness = useSessionHarnesses();
const REPLY = 'A reply long enough to be streamed in several text deltas.';

describe('droid session: bad frames mid-turn', () => {
  it('malformed-frame: records an error event and the turn still completes', async () => {
    const h = await harness({ faults: ['malformed-frame'], reply: REPLY });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    expect(outcome.text).toBe(REPLY);
    const errors = ofType(logged, 'error');
    expect(errors).toEqual([
      expect.objectContaining({ code: 'protocol_error', message: expect.stringMatching(/malformed inbound line: invalid JSON/) }),
    ]);
    // Frames after the bad line were still decoded: the committed message comes later.
    const message = ofType(logged, 'assistant.message').find((event) => event.text === REPLY);
    expect(message?.seq).toBeGreaterThan(errors[0]!.seq);
    await expectNoProcessLeft(h.pid());
  });

  it('oversized-frame: records an error for the line, discards it, and the turn still completes', async () => {
    const h = await harness({ faults: ['oversized-frame'], reply: REPLY });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    expect(outcome.text).toBe(REPLY);
    const errors = ofType(logged, 'error');
    expect(errors).toEqual([expect.objectContaining({ code: 'protocol_error', message: expect.stringMatching(/exceeds maxLineBytes/) })]);
    // The 20 MiB line was dropped, not kept: no event carries it, the error holds no copy of it,
    // and the whole log stays small.
    expect(errors[0]!.message.length).toBeLessThan(4096);
    expect(ofType(h.events, 'native').filter((event) => event.nativeType === 'fake_padding')).toEqual([]);
    expect(h.events.some((event) => JSON.stringify(event).length > 64 * 1024)).toBe(false);
    const log = await stat(join(h.runtime.stateDir, 'sessions', runner.id, 'events.jsonl'));
    expect(log.size).toBeLessThan(256 * 1024);
    const message = ofType(logged, 'assistant.message').find((event) => event.text === REPLY);
    expect(message?.seq).toBeGreaterThan(errors[0]!.seq);
    await expectNoProcessLeft(h.pid());
  });

  it('double-response: each duplicate response is reported as a problem and the turn completes normally', async () => {
    const h = await harness({ faults: ['double-response'], reply: REPLY });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    expect(outcome.text).toBe(REPLY);
    // initialize_session, update_session_settings and add_user_message were each answered twice.
    const requests = (await h.received()).filter((frame) => frame.type === 'request');
    const duplicates = ofType(logged, 'error').filter((event) => /already settled request/.test(event.message));
    expect(duplicates.map((event) => event.code)).toEqual(requests.map(() => 'protocol_error'));
    for (const request of requests) expect(duplicates.some((event) => event.message.includes(`request ${String(request.id)} `))).toBe(true);
    await expectNoProcessLeft(h.pid());
  });

  it('idle-before-message: an early idle does not end the turn; the text is the committed message', async () => {
    const h = await harness({ faults: ['idle-before-message'], reply: REPLY });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    const idle = ofType(logged, 'working.changed').find((event) => event.state === 'idle');
    const message = ofType(logged, 'assistant.message').find((event) => event.text === REPLY);
    const completed = ofType(logged, 'turn.completed')[0];
    expect(idle && message && completed).toBeTruthy();
    // The early idle came before the committed message, and the turn ended after it, with the
    // message's text and the usage reported after the idle.
    expect(idle!.seq).toBeLessThan(message!.seq);
    expect(message!.seq).toBeLessThan(completed!.seq);
    expect(outcome.text).toBe(message!.text);
    expect(outcome.usage).toMatchObject({ reported: true, inputTokens: 60, outputTokens: 4 });
    await expectNoProcessLeft(h.pid());
  });
});
