/**
 * Compares the packages an image's `node_modules` holds with the install the tests ran against:
 * for every package in the image, the tested install must hold the same name and version with
 * the same files, byte for byte. A dependency patched in the tested install (patches/) but not in
 * the image, or a different version resolved, shows as a difference.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

export interface InstalledPackage {
  /** `name@version`. */
  id: string;
  dir: string;
}

/** Every package folder below `nodeModules`, nested ones included. */
export async function installedPackages(nodeModules: string): Promise<InstalledPackage[]> {
  const found: InstalledPackage[] = [];
  const visit = async (folder: string): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dir = join(folder, entry.name);
      if (entry.name.startsWith('@')) {
        await visit(dir);
        continue;
      }
      const manifest = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
      if (manifest === undefined) continue;
      const { name, version } = JSON.parse(manifest) as { name?: string; version?: string };
      found.push({ id: `${name ?? entry.name}@${version ?? '?'}`, dir });
      await visit(join(dir, 'node_modules'));
    }
  };
  await visit(nodeModules);
  return found;
}

/** Relative path → sha256 of every file of a package, its own node_modules left out. */
export async function packageFiles(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const visit = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') await visit(path);
      } else if (entry.isFile()) {
        files.set(
          relative(dir, path),
          createHash('sha256')
            .update(await readFile(path))
            .digest('hex'),
        );
      }
    }
  };
  await visit(dir);
  return files;
}

export interface PackageDifference {
  id: string;
  /** Why it differs: missing from the tested install, or the files that differ. */
  reason: string;
}

export async function compareWithTested(
  shipped: string,
  tested: string,
): Promise<{ compared: number; differences: PackageDifference[] }> {
  const testedById = new Map<string, string[]>();
  for (const pkg of await installedPackages(tested)) {
    testedById.set(pkg.id, [...(testedById.get(pkg.id) ?? []), pkg.dir]);
  }
  const differences: PackageDifference[] = [];
  const shippedPackages = await installedPackages(shipped);
  for (const pkg of shippedPackages) {
    const candidates = testedById.get(pkg.id);
    if (!candidates) {
      differences.push({ id: pkg.id, reason: 'not in the tested install' });
      continue;
    }
    const files = await packageFiles(pkg.dir);
    let closest: string[] | undefined;
    for (const candidate of candidates) {
      const testedFiles = await packageFiles(candidate);
      const differing = [...new Set([...files.keys(), ...testedFiles.keys()])].filter(
        (file) => files.get(file) !== testedFiles.get(file),
      );
      if (closest === undefined || differing.length < closest.length) closest = differing;
      if (differing.length === 0) break;
    }
    if (closest && closest.length > 0) {
      differences.push({
        id: pkg.id,
        reason: `files differ from the tested copy: ${closest.slice(0, 5).join(', ')}${closest.length > 5 ? ', …' : ''}`,
      });
    }
  }
  return { compared: shippedPackages.length, differences };
}
