import { existsSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionSummary, TurnHandle, WaitResult } from '../../core/orchestrator/index.js';
import { CliRigs, type CliResult } from '../support/one-works-cli.js';
import { toolResults } from '../support/scripted-model.js';
import { until } from './orchestrator-rig.js';

// A turn run by `one-works serve` has no terminal: an ask the policy escalates is declined,
// recorded as decided by policy, and the session needs attention saying what was declined.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

function json<T>(result: CliResult): T {
  expect(result, result.stderr).toMatchObject({ exitCode: 0 });
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as T;
}

describe('one-works serve: escalations without a person', () => {
  it('declines a medium-risk Execute at autonomy low and marks the session as needing attention', async () => {
    const model = await rigs.model({
      steps: [
        (request) =>
          toolResults(request).length > 0
            ? { text: 'Could not write.' }
            : {
                toolCalls: [
                  {
                    id: 'serve_attention_1',
                    name: 'Execute',
                    arguments: { command: 'echo hi > f.txt', riskLevel: 'medium', riskLevelReason: 'writes a file' },
                  },
                ],
              },
        { text: 'Could not write.' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const server = rig.start(['serve']);
    try {
      await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
      const handle = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', rig.workspace, 'write f.txt']));
      const waited = json<WaitResult>(await rig.run(['--json', 'wait', handle.sessionId, '--timeout', '120']));
      expect(waited.timedOut).toBe(false);
      const summary = waited.settled.find((s) => s.sessionId === handle.sessionId) as SessionSummary;
      expect(summary.state).toBe('needs_attention');
      expect(summary.attention?.join(' ')).toMatch(/declined/i);
      const events = await rig.readEvents(handle.sessionId);
      expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny', by: 'policy' });
      await expect(access(join(rig.workspace, 'f.txt'))).rejects.toThrow(/ENOENT/);
    } finally {
      server.kill('SIGTERM');
      expect((await server.result).exitCode).toBe(0);
    }
  });
});
