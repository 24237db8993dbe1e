// Exploration, not a test (docs/droid-adapter.md, "Permissions"): which tool calls make the real
// droid send `droid.request_permission` at a native autonomy level, with extra settings.json keys.
// Every call is answered proceed_once; the output says, per call, whether droid asked and what
// the tool returned, plus `list_tools` at each level and the tools the model was offered.
//   npx tsx test/explore/droid-ask-matrix.ts <droid binary> <autonomy> '<settings json>' [case,case…]
//   CMDS='ls|pwd' …  runs one low-risk Execute per command instead; SCHEMA=<tool> prints its schema.
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isNotification, notificationOf, startRawDroid } from '../support/raw-droid-client.js';
import { droidCustomModel, startScriptedModel, type Step } from '../support/scripted-model.js';

const binary = process.argv[2]!;
const autonomy = process.argv[3] ?? 'off';
const extraSettings = JSON.parse(process.argv[4] ?? '{}') as Record<string, unknown>;
const only = process.argv[5]?.split(',');
const SERVER = fileURLToPath(new URL('../support/stdio-mcp-server.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url));

const root = await mkdtemp(join(tmpdir(), 'ow-explore-'));
const home = join(root, 'home');
const ws = join(root, 'ws');
await mkdir(home);
await mkdir(ws);
await writeFile(join(ws, 'existing.txt'), 'hello\n');
// WS_SETTINGS: a workspace's own .factory/settings.json (JSON); MANAGED: droid's managed-level settings (JSON).
if (process.env.WS_SETTINGS) {
  await mkdir(join(ws, '.factory'));
  await writeFile(join(ws, '.factory', 'settings.json'), process.env.WS_SETTINGS);
}
const managedEnv: Record<string, string> = {};
if (process.env.MANAGED) {
  await writeFile(join(root, 'managed.json'), process.env.MANAGED);
  managedEnv.FACTORY_ORG_MANAGED_SETTINGS_LOCAL_PATH = join(root, 'managed.json');
}
await mkdir(join(home, '.factory'), { recursive: true });
await writeFile(
  join(home, '.factory', 'mcp.json'),
  JSON.stringify({ mcpServers: { tiny: { type: 'stdio', command: process.execPath, args: ['--import', TSX, SERVER] } } }),
);

type Case = [string, string, Record<string, unknown>];
const cases: Case[] = [
  ['exec-low-echo-redirect', 'Execute', { command: 'echo ran > m1.txt', riskLevel: 'low', riskLevelReason: 'r' }],
  ['exec-low-ls', 'Execute', { command: 'ls', riskLevel: 'low', riskLevelReason: 'r' }],
  ['exec-low-pwd', 'Execute', { command: 'pwd', riskLevel: 'low', riskLevelReason: 'r' }],
  ['exec-low-git-status', 'Execute', { command: 'git status', riskLevel: 'low', riskLevelReason: 'r' }],
  ['exec-medium', 'Execute', { command: 'touch m2.txt', riskLevel: 'medium', riskLevelReason: 'r' }],
  ['exec-high', 'Execute', { command: 'echo high > m3.txt', riskLevel: 'high', riskLevelReason: 'r' }],
  ['exec-norisk', 'Execute', { command: 'echo none > m4.txt' }],
  ['create', 'Create', { file_path: join(ws, 'c.txt'), content: 'created\n' }],
  ['edit', 'Edit', { file_path: join(ws, 'existing.txt'), old_str: 'hello', new_str: 'edited' }],
  ['read', 'Read', { file_path: join(ws, 'existing.txt') }],
  ['ls', 'LS', { directory_path: ws }],
  ['todo', 'TodoWrite', { todos: '1. [pending] something' }],
  ['skill', 'Skill', { skill: 'nonexistent' }],
  ['task', 'Task', { subagent_type: 'worker', description: 'd', prompt: 'p' }],
  ['genimage', 'GenerateImage', { prompt: 'a cat' }],
  ['connector', 'ConnectorSearch', { query: 'x' }],
  ['toolsearch', 'ToolSearch', { query: 'select:tiny___echo' }],
  ['mcp', 'tiny___echo', { text: 'hello mcp' }],
  ['taskoutput', 'TaskOutput', { task_id: 'nope' }],
  ['taskstop', 'TaskStop', { task_id: 'nope' }],
  ['applypatch', 'ApplyPatch', { input: `*** Begin Patch\n*** Add File: ${join(ws, 'p.txt')}\n+patched\n*** End Patch\n` }],
  ['fetchurl', 'FetchUrl', { url: 'http://127.0.0.1:9/x' }],
  ['websearch', 'WebSearch', { query: 'x' }],
];
if (process.env.CMDS)
  for (const [i, c] of process.env.CMDS.split('|').entries())
    cases.push([`cmd${i}`, 'Execute', { command: c, riskLevel: 'low', riskLevelReason: 'r' }]);
const chosen = process.env.CMDS ? cases.filter((c) => c[0].startsWith('cmd')) : only ? cases.filter((c) => only.includes(c[0])) : cases;
const steps: Step[] = chosen.flatMap(([id, name, args]) => [
  { toolCalls: [{ id: `call_${id}`, name, arguments: args }] },
  { text: `done ${id}` },
]);
const model = await startScriptedModel({ steps });
const { entry, modelId } = droidCustomModel(model.baseUrl);
const asked: Record<string, string[]> = {};
const client = await startRawDroid({
  binary,
  cwd: ws,
  home,
  env: managedEnv,
  settings: {
    customModels: [{ ...entry, ...(extraSettings.fileEditToolProfile ? { fileEditToolProfile: extraSettings.fileEditToolProfile } : {}) }],
    ...extraSettings,
  },
  onServerRequest: (method, params) => {
    const p = params as { toolUses?: { toolUse: { id: string }; confirmationType: string; details?: { impactLevel?: string } }[] };
    if (method === 'droid.request_permission') {
      for (const t of p.toolUses ?? []) {
        const seen = asked[t.toolUse.id] ?? [];
        seen.push(`${t.confirmationType}/${t.details?.impactLevel ?? '-'}`);
        asked[t.toolUse.id] = seen;
      }
      return { selectedOption: 'proceed_once' };
    }
    if (method === 'droid.ask_user') return { cancelled: true, answers: [] };
    throw new Error(`unexpected ${method}`);
  },
});
try {
  await client.request('droid.initialize_session', { machineId: 'explore', cwd: ws, autonomyLevel: autonomy, interactionMode: 'auto' });
  await client.request('droid.update_session_settings', { modelId, autonomyLevel: autonomy });
  for (const level of ['off', 'low', 'medium', 'high']) {
    const tools = (await client.request('droid.list_tools', { modelId, autonomyLevel: level })) as {
      tools: { llmId: string; category: string; currentlyAllowed: boolean }[];
    };
    console.log(`list_tools@${level}:`, tools.tools.map((t) => `${t.llmId}:${t.category}:${t.currentlyAllowed ? 'Y' : 'n'}`).join(' '));
  }
  await new Promise((r) => setTimeout(r, 1500));
  for (const [id] of chosen) {
    const turn = await client.runTurn(`do ${id}`, { timeoutMs: 60_000 } as never);
    const results = turn.frames
      .filter((f) => isNotification(f, 'tool_result'))
      .map((f) => notificationOf(f) as { toolUseId: string; isError: boolean; content: unknown });
    const r = results.find((x) => x.toolUseId === `call_${id}`);
    console.log(
      `${id}${process.env.CMDS ? ` [${(chosen.find((c) => c[0] === id)![2] as { command: string }).command}]` : ''}: asked=${JSON.stringify(asked[`call_${id}`] ?? null)} result=${
        r
          ? `${r.isError ? 'ERR' : 'ok'} ${String(typeof r.content === 'string' ? r.content : JSON.stringify(r.content))
              .slice(0, 100)
              .replace(/\n/g, ' ')}`
          : 'none'
      } reason=${(turn.completion as { reason?: string }).reason}`,
    );
  }
  const stepReq = model.requests.filter((r) => r.kind === 'step');
  const toolNames = (r: (typeof stepReq)[number]) =>
    ((r.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
  console.log('model tools (first request):', toolNames(stepReq[0]!).join(' '));
  if (process.env.SCHEMA)
    console.log(
      JSON.stringify(
        (stepReq[0]!.body as { tools: { function: { name: string } }[] }).tools.find((t) => t.function.name === process.env.SCHEMA),
      ),
    );
  console.log('ws files:', (await readdir(ws)).join(' '));
} finally {
  await client.close();
  await model.close();
  await rm(root, { recursive: true, force: true });
}
