import type { Command } from '../command.js';

/**
 * The command registry. Each command lives in its own file and is loaded on demand so
 * `compactor --help` stays fast. Add one line per command.
 */
export const commands: Record<string, () => Promise<Command>> = {
  import: async () => (await import('./import.js')).command,
  stats: async () => (await import('./stats.js')).command,
  restore: async () => (await import('./restore.js')).command,
  plan: async () => (await import('./plan.js')).planCommand,
  project: async () => (await import('./project.js')).projectCommand,
  run: async () => (await import('./run.js')).runCommand,
  compact: async () => (await import('./compact.js')).compactCommand,
};
