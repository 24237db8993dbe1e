import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// A deliberately broken RunnerFrame runner for fault tests (started with `node --import tsx`).
// argv[2] names the fault; every other frame is answered like a well-behaved runner would:
//   oversized      on prompt: one 5 MiB event line, then silence
//   unknown-field  on prompt: an event frame with a field the schema does not know
//   unknown-id     on prompt: a reply to an id One Works never sent
//   crash          on prompt: a delta, then exit 3 mid-turn
//   silent-open    never answers open
//   checkpoint-outside   a checkpoint naming ../escape.txt
//   checkpoint-size      a checkpoint claiming 7 bytes for a 5-byte file
//   tools-<n>      on prompt: n `sleep 1` commands at once, in one write; replies once all n results are back
//   (none)         answers a prompt with "fake reply"

const fault = process.argv[2] ?? 'none';

function write(frame: unknown): void {
  process.stdout.write(`${JSON.stringify(frame)}\n`);
}

interface Frame {
  attachment: string;
  id: string;
  turn?: string;
  method?: string;
  params?: { dir?: string };
}

let dir = '';
let toolsPending = 0;
let promptFrame: Frame | undefined;

function checkpointFiles(): Array<{ path: string; size: number }> {
  if (fault === 'checkpoint-outside') return [{ path: '../escape.txt', size: 1 }];
  writeFileSync(join(dir, 'state.txt'), 'state');
  return [{ path: 'state.txt', size: fault === 'checkpoint-size' ? 7 : 5 }];
}

function onPrompt(frame: Frame): void {
  const head = { attachment: frame.attachment, turn: frame.turn };
  if (fault.startsWith('tools-')) {
    const count = Number(fault.slice('tools-'.length));
    toolsPending = count;
    promptFrame = frame;
    const calls = Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        ...head,
        id: `t${i}`,
        method: 'tool.call',
        params: { id: `c${i}`, name: 'run_command', arguments: { command: 'sleep 1' } },
      }),
    );
    process.stdout.write(`${calls.join('\n')}\n`);
    return;
  }
  switch (fault) {
    case 'oversized':
      write({ ...head, event: 'assistant.delta', data: { text: 'x'.repeat(5 * 1024 * 1024) } });
      return;
    case 'unknown-field':
      write({ ...head, event: 'assistant.delta', data: { text: 'hi' }, extra: true });
      return;
    case 'unknown-id':
      write({ ...head, id: 'no-such-request', result: { stop_reason: 'stop' } });
      return;
    case 'crash':
      write({ ...head, event: 'assistant.delta', data: { text: 'partial' } });
      process.stderr.write('fake runner: crashing on purpose\n');
      process.exit(3);
      return;
    default:
      write({ ...head, event: 'assistant.message', data: { text: 'fake reply', stop_reason: 'stop' } });
      write({ ...head, id: frame.id, result: { stop_reason: 'stop' } });
  }
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const frame = JSON.parse(line) as Frame & { result?: unknown };
    if (frame.method === undefined && frame.result !== undefined) {
      toolsPending -= 1;
      if (toolsPending === 0 && promptFrame) {
        write({ attachment: promptFrame.attachment, turn: promptFrame.turn, event: 'assistant.message', data: { text: 'all tools done' } });
        write({ attachment: promptFrame.attachment, turn: promptFrame.turn, id: promptFrame.id, result: { stop_reason: 'stop' } });
      }
      return;
    }
    switch (frame.method) {
      case 'open':
        dir = frame.params?.dir ?? '';
        if (fault !== 'silent-open') write({ attachment: frame.attachment, id: frame.id, result: { resumed: false } });
        return;
      case 'checkpoint':
        write({ attachment: frame.attachment, id: frame.id, result: { files: checkpointFiles() } });
        return;
      case 'prompt':
        onPrompt(frame);
        return;
      default:
        write({ attachment: frame.attachment, id: frame.id, ...(frame.turn ? { turn: frame.turn } : {}), result: {} });
    }
  })
  .on('close', () => process.exit(0));
