import type { z } from 'zod';
import { collectSecrets } from '../core/config/secrets.js';
import { objectKeys, schemaAt } from '../core/config/schema-walk.js';
import { ADAPTER_CREDENTIALS, CONFIG_SCHEMA, type CliContext } from './context.js';

/**
 * Every secret of the config, as `collectSecrets(CONFIG_SCHEMA, ctx.config)` finds them, without
 * making the adapter blocks that cannot hold one. A block the file leaves out is made (its schema
 * built and its defaults parsed, some ms each) only when first read; its defaults hold no secret
 * but the credentials its `credentials` field takes from the environment (`.meta({ env })`, made
 * by credentialsField from ADAPTER_CREDENTIALS alone; test/cli/config-secrets.test.ts checks that
 * every block's environment defaults are its credentials). So such a block is read here only when
 * the environment sets one of its credentials; every block the file names is read.
 */
export function configSecrets(ctx: Pick<CliContext, 'config' | 'env' | 'explicitKeys'>): string[] {
  const { adapters, ...rest } = ctx.config as { adapters: Record<string, unknown> };
  const found = new Set(collectSecrets(settingsSchema(), rest));
  for (const name of objectKeys(adaptersSchema()) ?? []) {
    if (!ctx.explicitKeys.has(`adapters.${name}`) && !credentialsSet(name, ctx.env)) continue;
    for (const secret of collectSecrets(adapterBlockSchema(name), adapters[name])) found.add(secret);
  }
  return [...found];
}

// True when the environment sets (non-empty) one of the credentials of the adapter block `name`.
function credentialsSet(name: string, env: NodeJS.ProcessEnv): boolean {
  const credentials = Object.hasOwn(ADAPTER_CREDENTIALS, name) ? ADAPTER_CREDENTIALS[name]! : {};
  return Object.keys(credentials).some((variable) => (env[variable] ?? '') !== '');
}

// The config schema without its adapter blocks, made once.
let settings: z.ZodType | undefined;
function settingsSchema(): z.ZodType {
  settings ??= CONFIG_SCHEMA.omit({ adapters: true });
  return settings;
}

function adaptersSchema(): z.ZodType {
  return schemaAt(CONFIG_SCHEMA, ['adapters'])!;
}

function adapterBlockSchema(name: string): z.ZodType {
  return schemaAt(CONFIG_SCHEMA, ['adapters', name])!;
}
