import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatEntries, runDroidCapture } from './droid-corpus-harness.js';

/**
 * Regenerates `test/fixtures/droid/<version>/<case>.events.json` from the captures next to them.
 * The expected files are the spec of the projection: review every change by hand before
 * committing it. Usage: `npx tsx test/support/regen-droid-corpus.ts [version]` (default 0.225.2).
 */
const version = process.argv[2] ?? '0.225.2';
const dir = join(import.meta.dirname, '..', 'fixtures', 'droid', version);
const captures = readdirSync(dir)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();
for (const capture of captures) {
  const { entries } = runDroidCapture(join(dir, capture));
  const target = join(dir, capture.replace(/\.jsonl$/, '.events.json'));
  writeFileSync(target, formatEntries(entries));
  process.stdout.write(`${target}: ${entries.length} entries\n`);
}
