import type { Command } from '../command.js';

/** One entry of the command table: the line `compactor --help` shows, and how to load the command. */
export interface CommandEntry {
  /** One line for the command list; kept here so `--help` loads no command module. */
  summary: string;
  /** Loads the command's module on demand (zod schemas, tokenizer, providers, machines come with it). */
  load(): Promise<Command>;
}

/**
 * The command table. Each command lives in its own file, exported as `command`, and is
 * imported only when that command runs (or prints its own --help), so `compactor --version`
 * and `--help` start fast. Add one entry per command.
 */
export const commands: Record<string, CommandEntry> = {
  import: {
    summary: 'convert a session file (transcript or provider JSON) to canonical or a provider format',
    load: async () => (await import('./import.js')).command,
  },
  stats: {
    summary: 'messages, tool calls/results, parallel batches and token estimates of a session file',
    load: async () => (await import('./stats.js')).command,
  },
  restore: {
    summary: 'recover the full pre-compaction history of a session directory at a boundary',
    load: async () => (await import('./restore.js')).command,
  },
  plan: {
    summary: 'show the token budgets derived from context limits',
    load: async () => (await import('./plan.js')).command,
  },
  project: {
    summary: 'build the request projection of a session and report what was cleared',
    load: async () => (await import('./project.js')).command,
  },
  run: {
    summary: 'the main job: clear, estimate and compact a session when needed; report what happened',
    load: async () => (await import('./run.js')).command,
  },
  compact: {
    summary: 'manual /compact: always summarize a session now and report items before/after',
    load: async () => (await import('./compact.js')).command,
  },
  serve: {
    summary: 'a compacting HTTP proxy: point any agent at it instead of the Anthropic or OpenAI API',
    load: async () => (await import('./serve.js')).command,
  },
};
