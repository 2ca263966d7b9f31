/** `compactor serve` as a library: a context-compacting HTTP proxy for any agent. */
export { startServer, type RunningServer } from './server.js';
export { type ServeOptions, DEFAULT_PORT } from './options.js';
