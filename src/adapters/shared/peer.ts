import { PeerDependencyError } from '../../core/errors.js';
/**
 * Loads an optional peer dependency of an adapter entry. When the framework is not installed
 * the import fails with a message that names the package to install, instead of Node's
 * bare "Cannot find package" from deep inside our files.
 */
export async function loadPeer<T>(load: () => Promise<T>, pkg: string, entry: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new PeerDependencyError(
        `context-compactor/${entry} needs the optional peer dependency "${pkg}": npm install ${pkg}`,
        { cause: e },
      );
    throw e;
  }
}
