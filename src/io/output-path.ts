import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, isAbsolute } from 'node:path';
import { UserError } from '../core/errors.js';
import { refuseSpecialOutput } from './output-file.js';

// Files of a session directory that no output may replace.
const STORE_NAMES = new Set(['events.jsonl', 'events.jsonl.corrupt', 'lock', 'lock.break']);
const STORE_DIRS = new Set(['artifacts', 'snapshots', 'previous']);

/** Where `path` leads once every symbolic link is followed (the file itself may not exist). */
function resolved(path: string): string {
  try {
    if (existsSync(path)) return realpathSync(path);
    const dir = dirname(path);
    return join(existsSync(dir) ? realpathSync(dir) : dir, basename(path));
  } catch {
    return path; // a link into /proc that names a pipe (`/dev/stdout`) has no path to resolve
  }
}

/** True when `p` is inside `dir` (or is it). */
function inside(dir: string, p: string): boolean {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** True when `p` is one of a session directory's store files (its parent holds events.jsonl). */
function isStoreFile(p: string, sessionDirs: string[]): boolean {
  for (const d of sessionDirs) {
    if (!inside(d, p)) continue;
    const first = relative(d, p).split(/[\\/]/)[0]!;
    if (STORE_NAMES.has(first) || STORE_DIRS.has(first) || first === '') return true;
  }
  return STORE_NAMES.has(basename(p)) && existsSync(join(dirname(p), 'events.jsonl'));
}

/**
 * Checks an output path before any work is done or committed: its directory
 * exists, it is not a directory, socket or block device, and neither it nor the file a symbolic link there leads
 * to is one of the inputs or a session directory's store files. `label` names it in the
 * one-line error (e.g. "run: --out").
 */
export function checkOutputPath(
  label: string,
  path: string,
  guard: { inputs?: string[]; sessionDirs?: string[] } = {},
): void {
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`${label}: no such directory ${dir}`);
  refuseSpecialOutput(label, path);
  const target = resolved(path);
  const link = existsSync(path) && lstatSync(path).isSymbolicLink() ? ` (a symbolic link to ${target})` : '';
  for (const input of guard.inputs ?? [])
    if (existsSync(input) && resolved(input) === target)
      throw new UserError(`${label}: ${path}${link} is an input of this command; write to another file`);
  const dirs = (guard.sessionDirs ?? []).filter((d) => existsSync(d)).map((d) => realpathSync(d));
  if (isStoreFile(target, dirs))
    throw new UserError(`${label}: ${path}${link} is a session directory's own file; write elsewhere`);
}
