import { loadOptional } from '../../core/optional-package.js';

/** Loads the framework an adapter entry needs (an optional peer dependency). */
export function loadPeer<T>(load: () => Promise<T>, pkg: string, entry: string): Promise<T> {
  return loadOptional(load, pkg, `context-compactor/${entry}`);
}
