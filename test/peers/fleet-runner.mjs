import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// A tiny RunnerFrame runner for the fleet tests (plain Node, no TypeScript: it starts fast).
// A prompt's text names its turn (`t-<n>`) and how long it works (`sleep:<ms>`); the runner
// appends `<token> start <ms since epoch> <pid>` and `<token> end <ms> <pid>` lines to
// argv[2] (the ledger: what truly ran, and when), then answers `done <token>`. An interrupt
// ends the turn at once (`<token> interrupted`). A prompt with `linger` keeps the runner alive
// when its stdin closes (as an agent that outlives a killed One Works would), until its turn ends.

const ledger = process.argv[2];
let dir = '';
let running;

function write(frame) {
  process.stdout.write(`${JSON.stringify(frame)}\n`);
}

function note(token, what) {
  appendFileSync(ledger, `${token} ${what} ${Date.now()} ${process.pid}\n`);
}

function onPrompt(frame) {
  const text = String(frame.params?.text ?? '');
  const token = /\bt-\d+\b/.exec(text)?.[0] ?? 'untagged';
  const ms = Number(/sleep:(\d+)/.exec(text)?.[1] ?? 0);
  note(token, 'start');
  const head = { attachment: frame.attachment, turn: frame.turn };
  const finish = (stop) => {
    clearTimeout(running?.timer);
    running = undefined;
    note(token, stop === 'interrupted' ? 'interrupted' : 'end');
    appendFileSync(join(dir, 'state.txt'), `${token}\n`);
    write({ ...head, event: 'assistant.message', data: { text: `done ${token}`, stop_reason: stop } });
    write({ ...head, id: frame.id, result: { stop_reason: stop } });
  };
  running = { turn: frame.turn, finish, linger: /\blinger\b/.test(text), timer: setTimeout(() => finish('stop'), ms) };
}

function checkpointFiles() {
  appendFileSync(join(dir, 'state.txt'), '');
  return [{ path: 'state.txt', size: readFileSync(join(dir, 'state.txt')).length }];
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    const frame = JSON.parse(line);
    switch (frame.method) {
      case 'open':
        dir = frame.params?.dir ?? '';
        write({ attachment: frame.attachment, id: frame.id, result: { resumed: false } });
        return;
      case 'prompt':
        onPrompt(frame);
        return;
      case 'interrupt':
        write({ attachment: frame.attachment, id: frame.id, turn: frame.turn, result: {} });
        if (running && running.turn === frame.turn) running.finish('interrupted');
        return;
      case 'checkpoint':
        write({ attachment: frame.attachment, id: frame.id, result: { files: checkpointFiles() } });
        return;
      default:
        write({ attachment: frame.attachment, id: frame.id, ...(frame.turn ? { turn: frame.turn } : {}), result: {} });
    }
  })
  .on('close', () => {
    if (!running?.linger) process.exit(0);
  });
