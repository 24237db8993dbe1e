import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandModulesFor, tableCommandNames } from '../../cli/command-table.js';

// The top-level command names a set of command modules registers.
async function registeredNames(loads: ReturnType<typeof commandModulesFor>): Promise<string[][]> {
  const names: string[][] = [];
  for (const load of loads) {
    const program = new Command('one-works');
    (await load())(program, async () => undefined);
    names.push(program.commands.map((command) => command.name()));
  }
  return names;
}

describe('command table', () => {
  it('names exactly the commands each module registers, so a routed command is always found', async () => {
    expect(await registeredNames(commandModulesFor([]))).toEqual(tableCommandNames());
  });

  it('loads only the module of the command being run', async () => {
    for (const names of tableCommandNames()) {
      for (const name of names) {
        const loads = commandModulesFor(['--json', name, 'more', '--flag']);
        expect(loads).toHaveLength(1);
        expect((await registeredNames(loads))[0]).toContain(name);
      }
    }
  });

  it('skips the value of --config when looking for the command', async () => {
    const [registered] = await registeredNames(commandModulesFor(['--config', 'run', 'sessions']));
    expect(registered).toContain('sessions');
    expect(registered).not.toContain('run');
  });

  it('loads no command module for --version, and every module for help, no command or an unknown one', () => {
    const all = tableCommandNames().length;
    expect(commandModulesFor(['--version'])).toHaveLength(0);
    expect(commandModulesFor(['-c', 'x.yaml', '-V'])).toHaveLength(0);
    expect(commandModulesFor([])).toHaveLength(all);
    expect(commandModulesFor(['--help'])).toHaveLength(all);
    expect(commandModulesFor(['help', 'run'])).toHaveLength(all);
    expect(commandModulesFor(['no-such-command'])).toHaveLength(all);
  });
});
