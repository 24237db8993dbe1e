import { toolResults, type RecordedRequest, type StaticStep } from '../support/scripted-model.js';

/** A model turn that writes `word` into feature.txt (after a pause, so both turns overlap), then says so. */
export function writeWord(word: string, delayMs = 3000): (request: RecordedRequest) => StaticStep {
  return (request) =>
    toolResults(request).length > 0
      ? { text: `wrote ${word}` }
      : {
          delayMs,
          toolCalls: [
            {
              name: 'Execute',
              arguments: { command: `printf '${word}\\n' > feature.txt`, riskLevel: 'low', riskLevelReason: 'writes a file' },
            },
          ],
        };
}
