import semver from 'semver';
import { z } from 'zod';
import { OneWorksError } from '../errors.js';

/** One version's `dist` block: where the tarball is and how to check it. Lenient: registries add fields. */
export const DistSchema = z.looseObject({
  tarball: z.string().min(1),
  integrity: z.string().min(1).optional(),
  unpackedSize: z.number().int().nonnegative().optional(),
});

/** The abbreviated packument, reduced to what an install reads. */
export const PackumentSchema = z.looseObject({
  name: z.string(),
  versions: z.record(
    z.string(),
    z.looseObject({ version: z.string(), dist: DistSchema, dependencies: z.record(z.string(), z.string()).optional() }),
  ),
});

export type Packument = z.infer<typeof PackumentSchema>;

/** The version an install will fetch. */
export interface ResolvedVersion {
  packageName: string;
  version: string;
  tarballUrl: string;
  /** Subresource Integrity string from `dist.integrity`. */
  integrity: string;
  /** `dist.unpackedSize` when the registry reports it (bytes). */
  unpackedSize: number | undefined;
}

const NEAREST_COUNT = 3;

/**
 * Picks exactly `version` out of a packument (no ranges, no dist-tags). Rejects with
 * `install_not_found` listing the nearest published versions when it is absent,
 * `install_has_dependencies` when it declares runtime `dependencies` (the installer unpacks one
 * package and nothing else, so it would not run), and `install_integrity` when the registry
 * publishes no `dist.integrity` for it.
 */
export function selectVersion(raw: unknown, packageName: string, version: string): ResolvedVersion {
  const parsed = PackumentSchema.safeParse(raw);
  if (!parsed.success) {
    throw new OneWorksError('install_failed', `the registry sent a malformed packument for ${packageName}`, {
      data: { packageName, issues: parsed.error.issues.slice(0, 5).map((issue) => issue.path.join('.')) },
      cause: parsed.error,
    });
  }
  const entry = Object.hasOwn(parsed.data.versions, version) ? parsed.data.versions[version] : undefined;
  if (!entry) {
    const nearest = nearestVersions(Object.keys(parsed.data.versions), version);
    const listing = nearest.length > 0 ? `; nearest published: ${nearest.join(', ')}` : '; it has no published versions';
    throw new OneWorksError('install_not_found', `${packageName}@${version} is not published${listing}`, {
      data: { packageName, version, nearest },
    });
  }
  const dependencies = Object.entries(entry.dependencies ?? {});
  if (dependencies.length > 0) {
    const listed = dependencies.map(([name, range]) => `${name}@${range}`);
    throw new OneWorksError(
      'install_has_dependencies',
      `${packageName}@${version} declares runtime dependencies (${listed.join(', ')}); One Works installs a single self-contained package and runs no install step, so it refuses one that would not run. Pin a version without dependencies, or use cli.source: system or path with a CLI installed by npm`,
      { data: { packageName, version, dependencies: Object.fromEntries(dependencies) } },
    );
  }
  if (!entry.dist.integrity) {
    throw new OneWorksError(
      'install_integrity',
      `${packageName}@${version} has no dist.integrity in the registry; refusing to install it unverified`,
      {
        data: { packageName, version },
      },
    );
  }
  return {
    packageName,
    version,
    tarballUrl: entry.dist.tarball,
    integrity: entry.dist.integrity,
    unpackedSize: entry.dist.unpackedSize,
  };
}

/** Up to three published versions on each side of `version` in semver order, nearest first. */
export function nearestVersions(published: readonly string[], version: string): string[] {
  const sorted = published.filter((v) => semver.valid(v) !== null).sort(semver.compare);
  if (semver.valid(version) === null) return sorted.slice(-NEAREST_COUNT).reverse();
  const at = sorted.findIndex((v) => semver.gt(v, version));
  const split = at === -1 ? sorted.length : at;
  const below = sorted.slice(Math.max(0, split - NEAREST_COUNT), split).reverse();
  const above = sorted.slice(split, split + NEAREST_COUNT);
  const out: string[] = [];
  for (let i = 0; i < NEAREST_COUNT; i++) {
    const lower = below[i];
    const upper = above[i];
    if (lower) out.push(lower);
    if (upper) out.push(upper);
  }
  return out;
}
