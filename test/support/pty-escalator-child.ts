import { createTtyEscalator } from '../../cli/tty-escalator.js';

// Run on a terminal by test/cli/tty-escalator-process.test.ts: opens a permission prompt on the
// real stdin and leaves it unanswered; only a short timer keeps the process alive. The process
// must exit when that timer has fired, with the prompt still open.
const escalator = createTtyEscalator({ input: process.stdin, output: process.stderr, redact: (text) => text });
void escalator.ask(
  {
    requestId: 'r',
    kind: 'tool',
    tools: [{ toolUseId: 't', name: 'Execute', kind: 'execute', label: 'execute: make', command: 'make', input: {} }],
    options: [],
  },
  { reason: 'a test' },
);
setTimeout(() => process.stdout.write('timer fired\n'), 200);
