import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cwdSlug } from '../../adapters/droid/import/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { lastUserText, toolResults } from '../support/scripted-model.js';
import { chatMessages, contentText } from '../support/scripted-model-steps.js';

// `one-works import droid` over a source tree made of journals the real droid 0.225.2 wrote
// (test/fixtures/droid/0.225.2/journals, cwd rewritten to this rig's workspace) plus hand-made
// bad files; then `send` continues an imported session on the real droid.

const FIXTURES = fileURLToPath(new URL('../fixtures/droid/0.225.2/journals/-PROJECT/', import.meta.url));
const TOOLS_ID = '9ee48da7-99f4-454d-97b1-8915089b3b07';
const TEXT_ID = '35cfd93d-04c3-4e2a-b4c8-c13384450066';
const CANARY = 'canary-credential-5d1f0e';

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

interface ImportLine {
  path: string;
  status: string;
  sessionId?: string;
  addedEvents?: number;
  reason?: string;
}

// Every file below `dir` with its sha256 (links by their target), to prove the import wrote nothing.
async function checksums(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      const key = relative(dir, full);
      if (entry.isSymbolicLink()) out[key] = `link`;
      else if (entry.isDirectory()) await walk(full);
      else
        out[key] = `${(await stat(full)).mode}:${createHash('sha256')
          .update(await readFile(full))
          .digest('hex')}`;
    }
  };
  await walk(dir);
  return out;
}

// The source root: the two real journals in the workspace's project folder, droid's files
// that must never be read beside them, and one bad file of each kind.
async function sourceTree(rig: CliRig): Promise<{ root: string; project: string; outside: string }> {
  const root = join(rig.root, 'factory-sessions');
  const project = join(root, cwdSlug(rig.workspace));
  const other = join(root, cwdSlug('/some/other/project'));
  const outside = join(rig.root, 'outside');
  await Promise.all([mkdir(project, { recursive: true }), mkdir(other, { recursive: true }), mkdir(outside, { recursive: true })]);
  const real = async (id: string) => (await readFile(join(FIXTURES, `${id}.jsonl`), 'utf8')).replaceAll('/PROJECT', rig.workspace);
  await writeFile(join(project, `${TOOLS_ID}.jsonl`), await real(TOOLS_ID));
  await writeFile(join(project, `${TEXT_ID}.jsonl`), await real(TEXT_ID));
  await writeFile(join(project, `${TOOLS_ID}.settings.json`), JSON.stringify({ apiKey: CANARY }));
  await writeFile(join(root, '..', 'auth.json'), JSON.stringify({ token: CANARY }));
  await writeFile(join(root, 'mcp.json'), JSON.stringify({ env: { KEY: CANARY } }));
  const text = (await real(TEXT_ID)).trimEnd().split('\n');
  const header = JSON.parse(text[0]!) as Record<string, unknown>;
  await writeFile(join(project, 'malformed.jsonl'), [...text.slice(0, 2), '{"type":"message", oops', ...text.slice(2)].join('\n'));
  await writeFile(join(project, 'two-ids.jsonl'), [JSON.stringify({ ...header, sessionId: 'not-the-same' }), ...text.slice(1)].join('\n'));
  await writeFile(join(project, 'oversized.jsonl'), `${text[0]}\n${'x'.repeat(9 * 1024 * 1024)}\n`);
  await writeFile(join(outside, 'elsewhere.jsonl'), text.join('\n'));
  await symlink(join(outside, 'elsewhere.jsonl'), join(project, 'linked.jsonl'));
  await symlink(outside, join(root, cwdSlug(join(rig.workspace, 'escape'))));
  await writeFile(join(other, `${TEXT_ID}.jsonl`), text.join('\n'));
  return { root, project, outside };
}

const parseLines = (stdout: string): ImportLine[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ImportLine);

describe('one-works import droid', () => {
  it('imports the good journals of the project, refuses each bad file by name, never writes the source, and adds nothing twice', async () => {
    const model = await rigs.model({ steps: [{ text: 'unused' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const { root, project } = await sourceTree(rig);
    const before = await checksums(rig.root.concat('/factory-sessions'));

    const first = await rig.run([
      '--json',
      'import',
      'droid',
      '--root',
      root,
      '--project',
      rig.workspace,
      '--project',
      join(rig.workspace, 'escape'),
    ]);
    expect(first.exitCode, first.stderr).toBe(2);
    const lines = parseLines(first.stdout);
    const byName = Object.fromEntries(lines.map((l) => [relative(root, l.path), l]));
    const slug = cwdSlug(rig.workspace);
    expect(byName[`${slug}/${TOOLS_ID}.jsonl`]).toMatchObject({ status: 'imported', sessionId: expect.stringMatching(/^s-/) });
    expect(byName[`${slug}/${TEXT_ID}.jsonl`]).toMatchObject({ status: 'imported' });
    expect(byName[`${slug}/malformed.jsonl`]).toMatchObject({ status: 'refused', reason: expect.stringMatching(/line 3 is not JSON/) });
    expect(byName[`${slug}/two-ids.jsonl`]).toMatchObject({ status: 'refused', reason: expect.stringMatching(/two different ids/) });
    expect(byName[`${slug}/oversized.jsonl`]).toMatchObject({ status: 'refused', reason: expect.stringMatching(/over the \d+-byte cap/) });
    expect(byName[`${slug}/linked.jsonl`]).toMatchObject({ status: 'refused', reason: 'it is a symbolic link' });
    expect(byName[cwdSlug(join(rig.workspace, 'escape'))]).toMatchObject({ status: 'refused', reason: 'it is a symbolic link' });
    expect(lines).toHaveLength(7);
    expect(lines.some((l) => l.path.includes('some-other-project'))).toBe(false);

    // Nothing of a refused file was recorded: two sessions, both imported.
    const ids = await rig.sessionIds();
    expect(ids).toHaveLength(2);
    const toolsSession = byName[`${slug}/${TOOLS_ID}.jsonl`]!.sessionId!;
    const record = await rig.readSession(toolsSession);
    expect(record).toMatchObject({ adapter: 'droid', workspace: rig.workspace, nativeSessionId: TOOLS_ID, status: 'idle', runs: [] });
    expect(record.imported).toMatchObject({ source: join(project, `${TOOLS_ID}.jsonl`), kind: 'top-level' });

    const events = await rig.readEvents(toolsSession);
    const calls = events.filter((e) => e.type === 'tool.call');
    expect(calls.map((c) => [c.toolUseId, c.kind])).toEqual([
      ['call_journal_1', 'execute'],
      ['call_journal_2', 'execute'],
    ]);
    expect(events.filter((e) => e.type === 'tool.result').map((r) => r.toolUseId)).toEqual(['call_journal_1', 'call_journal_2']);
    expect(events.filter((e) => e.type === 'turn.queued').map((e) => e.prompt)).toEqual(['write hello', 'read it back']);

    // Listed as imported, and readable through `events`.
    const list = await rig.run(['sessions']);
    expect(list.stdout).toContain(`${toolsSession}`);
    expect(list.stdout.split('\n').filter((l) => l.includes('[imported]'))).toHaveLength(2);
    const shown = await rig.run(['events', toolsSession]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Wrote hello.txt.');

    // The source is untouched, and droid's other files were never read (the canary is nowhere in the state).
    expect(await checksums(root)).toEqual(before);
    for (const id of ids) {
      expect(await readFile(join(rig.stateDir, 'sessions', id, 'session.json'), 'utf8')).not.toContain(CANARY);
      expect(await readFile(join(rig.stateDir, 'sessions', id, 'events.jsonl'), 'utf8')).not.toContain(CANARY);
    }

    // A second import adds nothing.
    const counts = await Promise.all(ids.map(async (id) => (await rig.readEventLines(id)).length));
    const again = await rig.run(['--json', 'import', 'droid', '--root', root, '--project', rig.workspace]);
    expect(again.exitCode, again.stderr).toBe(2);
    const second = parseLines(again.stdout).filter((l) => l.status !== 'refused');
    expect(second.map((l) => [l.status, l.sessionId]).sort()).toEqual(ids.map((id) => ['unchanged', id]).sort());
    expect(await Promise.all(ids.map(async (id) => (await rig.readEventLines(id)).length))).toEqual(counts);
    expect(await rig.sessionIds()).toEqual(ids);
  });

  it('refuses a symlinked root as a whole, with exit 2 and nothing recorded', async () => {
    const model = await rigs.model({ steps: [{ text: 'unused' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const { root } = await sourceTree(rig);
    const link = join(rig.root, 'linked-root');
    await symlink(root, link);
    const result = await rig.run(['import', 'droid', '--root', link, '--all-projects']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`refused the import root ${link}: it is a symbolic link`);
    expect(await rig.sessionIds()).toEqual([]);
  });

  it('continues an imported session on the real droid: the model sees its history, the source stays as it was', async () => {
    const model = await rigs.model({ steps: [{ text: 'Continued from the import.' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const { root, project } = await sourceTree(rig);
    const before = await readFile(join(project, `${TOOLS_ID}.jsonl`));
    const imported = await rig.run(['--json', 'import', 'droid', '--root', root, '--project', rig.workspace]);
    const line = parseLines(imported.stdout).find((l) => l.path.endsWith(`${TOOLS_ID}.jsonl`))!;
    expect(line.status).toBe('imported');

    const sent = await rig.run(['send', line.sessionId!, 'what did you write?']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stdout).toContain('Continued from the import.');

    const call = model.requests.find((r) => r.kind === 'step')!;
    const messages = chatMessages(call).map((m) => `${String(m.role)}: ${contentText(m.content)}`);
    expect(messages.some((m) => m.startsWith('user: ') && m.includes('write hello'))).toBe(true);
    expect(messages).toContain('assistant: Wrote hello.txt.');
    expect(messages).toContain('assistant: It says hello.');
    expect(toolResults(call).map((r) => r.toolCallId)).toEqual(['call_journal_1', 'call_journal_2']);
    expect(lastUserText(call)).toContain('what did you write?');

    const record = await rig.readSession(line.sessionId!);
    expect(record.nativeSessionId).toBe(TOOLS_ID);
    expect(record.runs.map((r) => [r.id, r.status])).toEqual([['r1', 'completed']]);
    expect(await readFile(join(project, `${TOOLS_ID}.jsonl`))).toEqual(before);
  });
});
