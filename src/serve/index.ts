/** `compactor serve` as a library: a context-compacting HTTP proxy for any agent. */
export { startServer, type RunningServer } from './server.js';
export type { ServeOptions } from './options.js';
export { DEFAULT_PORT, SERVE_SETTINGS, type ServeSettings } from './settings.js';
