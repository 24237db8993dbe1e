import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/** File name of the completion marker inside an install directory. */
export const INSTALL_MARKER = '.one-works-install.json';

/**
 * The completion marker. It is the last file written into the temporary directory, before the
 * one rename that publishes it, so a directory at the target path with a valid marker is complete.
 */
export const InstallMarkerSchema = z.strictObject({
  package: z.string().min(1),
  version: z.string().min(1),
  integrity: z.string().min(1),
  /** The binary, relative to the install directory. */
  binPath: z.string().min(1),
  installedAt: z.iso.datetime(),
});

export type InstallMarker = z.infer<typeof InstallMarkerSchema>;

/** Writes the marker into `dir` (call it last, after every other file is on disk). */
export async function writeInstallMarker(dir: string, marker: InstallMarker): Promise<void> {
  await writeFile(path.join(dir, INSTALL_MARKER), `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o644 });
}

/**
 * Returns the marker of `dir` when it records `packageName@version` and its binary exists;
 * undefined for a missing directory, a missing or malformed marker, another package or version,
 * or a binary that has since been deleted. Never throws for those cases.
 */
export async function readInstallMarker(dir: string, packageName: string, version: string): Promise<InstallMarker | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, INSTALL_MARKER), 'utf8');
  } catch {
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = InstallMarkerSchema.safeParse(json);
  if (!parsed.success || parsed.data.package !== packageName || parsed.data.version !== version) return undefined;
  const binary = await stat(path.join(dir, parsed.data.binPath)).catch(() => undefined);
  return binary?.isFile() ? parsed.data : undefined;
}
