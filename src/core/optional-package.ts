import { PeerDependencyError } from './errors.js';

/**
 * Loads an optional peer dependency that one feature needs (a framework for its adapter, the
 * Prometheus client for the proxy, the WebSocket server for the inspector), so the library
 * installs without them. When it is missing the error names the package to install, instead of
 * Node's bare "Cannot find package" from deep inside our files.
 */
export async function loadOptional<T>(load: () => Promise<T>, pkg: string, feature: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new PeerDependencyError(
        `${feature} needs the optional peer dependency "${pkg}": npm install ${pkg}`,
        {
          cause: e,
        },
      );
    throw e;
  }
}
