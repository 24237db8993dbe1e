import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { setAsideGeminiChatRecords } from '../../../adapters/acp/gemini.js';

// Gemini CLI 0.61.0's session/load starts a fresh record named by the current minute before it
// looks the session up; a record of that same name would be wiped. setAsideGeminiChatRecords moves
// the session's records (only its own) to names the recorder never makes.

const ID = '0444f965-de04-4101-9c02-639ce5e20f6c';
const OTHER = '0444f965-ffff-4101-9c02-639ce5e20f6c';
const header = (sessionId: string) =>
  `${JSON.stringify({ sessionId, projectHash: 'h', startTime: 't', lastUpdated: 't', kind: 'main' })}\n`;

let home: string | undefined;
afterEach(async () => {
  if (home) await rm(home, { recursive: true, force: true });
  home = undefined;
});

async function chats(): Promise<string> {
  home = await mkdtemp(join(tmpdir(), 'ow-gemini-records-'));
  const dir = join(home, '.gemini', 'tmp', 'ws', 'chats');
  await mkdir(dir, { recursive: true });
  return dir;
}

describe('setAsideGeminiChatRecords', () => {
  it("renames the session's recorder-named records, keeps their content, and leaves other sessions' files alone", async () => {
    const dir = await chats();
    const record = `${header(ID)}{"id":"m1","type":"user","content":[{"text":"remember BRAVO-2"}]}\n`;
    await writeFile(join(dir, `session-2026-12-01T21-01-${ID.slice(0, 8)}.jsonl`), record);
    // Same short id, another session (its header says so): not ours.
    await writeFile(join(dir, `session-2026-12-01T21-02-${OTHER.slice(0, 8)}.jsonl`), header(OTHER));
    await writeFile(join(dir, 'session-2026-12-01T21-01-1234abcd.jsonl'), header('1234abcd-0000-0000-0000-000000000000'));
    const moved = await setAsideGeminiChatRecords(home!, ID);
    expect(moved).toEqual([join(dir, `session-2026-12-01T21-01-loaded-${ID.slice(0, 8)}.jsonl`)]);
    expect(await readFile(moved[0]!, 'utf8')).toBe(record);
    expect((await readdir(dir)).sort()).toEqual(
      [
        'session-2026-12-01T21-01-1234abcd.jsonl',
        `session-2026-12-01T21-01-loaded-${ID.slice(0, 8)}.jsonl`,
        `session-2026-12-01T21-02-${OTHER.slice(0, 8)}.jsonl`,
      ].sort(),
    );
  });

  it('never replaces a record set aside before: a second one of the same minute gets a name of its own', async () => {
    const dir = await chats();
    const earlier = `${header(ID)}{"id":"m1","type":"user","content":[{"text":"turn one"}]}\n`;
    await writeFile(join(dir, `session-2026-12-01T21-01-loaded-${ID.slice(0, 8)}.jsonl`), earlier);
    await writeFile(join(dir, `session-2026-12-01T21-01-${ID.slice(0, 8)}.jsonl`), header(ID));
    const moved = await setAsideGeminiChatRecords(home!, ID);
    expect(moved).toEqual([join(dir, `session-2026-12-01T21-01-loaded1-${ID.slice(0, 8)}.jsonl`)]);
    expect(await readFile(join(dir, `session-2026-12-01T21-01-loaded-${ID.slice(0, 8)}.jsonl`), 'utf8')).toBe(earlier);
    // Already set aside: a later load leaves it where it is.
    expect(await setAsideGeminiChatRecords(home!, ID)).toEqual([]);
  });

  it('a Gemini home without records is fine (nothing to move)', async () => {
    home = await mkdtemp(join(tmpdir(), 'ow-gemini-records-'));
    expect(await setAsideGeminiChatRecords(home, ID)).toEqual([]);
  });
});
