import { describe, expect, it } from 'vitest';
import { benchAdmission } from '../../bench/admission.js';

// The bench is run by `npm run bench`; this keeps it working (never its timings).
describe('benchAdmission', () => {
  it('drains every turn exactly once and prints its figures with the machine’s', async () => {
    let printed = '';
    const result = await benchAdmission({
      turns: 120,
      sessions: 30,
      trees: 6,
      warmupRounds: 0,
      rounds: 1,
      idleSessions: 50,
      write: (text) => (printed += text),
    });
    expect(result.allStartedOnce).toBe(true);
    expect(result.turns).toBe(120);
    expect(Number.isFinite(result.ratio) && result.ratio > 0).toBe(true);
    expect(printed).toContain('turns/s');
    expect(printed).toContain(result.machine.cpu);
  });
});
