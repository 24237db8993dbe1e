// A tiny RunnerFrame runner (docs/process-runner.md) for fleet and bench tests, plain Node (no
// tsx: it starts fast). A prompt is answered with `echo: <text>` and the runner's process id;
// a prompt `sleep <ms> …` first waits that long (an interrupt ends the wait: `interrupted`).
// Its native state is one append-only file in `dir` (one line per prompt), checkpointed.
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

let dir = '';
const running = new Map();

function write(frame) {
  process.stdout.write(`${JSON.stringify(frame)}\n`);
}

function reply(frame, result) {
  write({ attachment: frame.attachment, id: frame.id, ...(frame.turn ? { turn: frame.turn } : {}), result });
}

function prompt(frame) {
  const text = String(frame.params?.text ?? '');
  appendFileSync(join(dir, 'history.txt'), `${text.replace(/\n/g, ' ')}\n`);
  const sleep = /^sleep (\d+)/.exec(text);
  const finish = (stop) => {
    running.delete(frame.turn);
    if (stop === 'stop') {
      write({ attachment: frame.attachment, turn: frame.turn, event: 'assistant.message', data: { text: `echo: ${text} (pid ${process.pid})`, usage: { input: 3, output: 4 }, stop_reason: 'stop' } });
    }
    reply(frame, { stop_reason: stop });
  };
  const timer = setTimeout(() => finish('stop'), sleep ? Number(sleep[1]) : 0);
  running.set(frame.turn, () => {
    clearTimeout(timer);
    finish('interrupted');
  });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  const frame = JSON.parse(line);
  switch (frame.method) {
    case 'open': {
      dir = frame.params.dir;
      let resumed = false;
      try {
        resumed = statSync(join(dir, 'history.txt')).size > 0;
      } catch {
        writeFileSync(join(dir, 'history.txt'), '');
      }
      reply(frame, { resumed });
      break;
    }
    case 'prompt':
      prompt(frame);
      break;
    case 'interrupt':
      running.get(frame.turn)?.();
      reply(frame, {});
      break;
    case 'checkpoint':
      reply(frame, { files: [{ path: 'history.txt', size: statSync(join(dir, 'history.txt')).size }] });
      break;
    default:
      reply(frame, {});
  }
});
