import { readFileSync, unwatchFile, watchFile } from 'node:fs';

/** How often a running orchestrator looks at its config file, in ms (a stat; the file is read only when it changed). */
export const CONFIG_POLL_MS = 500;

/**
 * Watches the config file a server was started with: `onChange` is called once each time its
 * bytes come to differ from the ones loaded at start (an edit in place, a replacement by an
 * editor's rename, a removal), not again until they matched once more. Polls with `stat`, which
 * survives replacement, and keeps no process alive. Returns the function that stops watching.
 */
export function watchConfigFile(path: string, onChange: () => void, intervalMs = CONFIG_POLL_MS): () => void {
  const loaded = read(path);
  let differs = false;
  const listener = (): void => {
    const now = read(path);
    const changed = now === undefined || loaded === undefined ? now !== loaded : !now.equals(loaded);
    if (changed && !differs) onChange();
    differs = changed;
  };
  watchFile(path, { persistent: false, interval: intervalMs }, listener);
  return () => unwatchFile(path, listener);
}

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
