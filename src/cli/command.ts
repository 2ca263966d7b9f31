import type { ParseArgsConfig } from 'node:util';
import type { CompactorConfig } from './config.js';

/** What a command can touch: streams, environment and the loaded config. */
export interface CommandContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** True when stderr is a terminal (progress output goes there only then). */
  stderrIsTTY: boolean;
  /** compactor.config.json, validated (empty object when absent). Flags override it. */
  config: CompactorConfig;
  /** Aborted on Ctrl-C / SIGTERM (reason: `Interrupted`); only for commands that are `abortable`. */
  signal?: AbortSignal;
}

/** Parsed command line of one command. */
export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** One CLI command. Each lives in its own file under src/cli/commands/; its one-line summary sits in the command table (commands/index.ts). */
export interface Command {
  name: string;
  /** Full `--help` text (usage line, flags, examples). */
  help: string;
  /** node:util parseArgs options; `json`, `help` and `config` are added by the dispatcher. */
  options: NonNullable<ParseArgsConfig['options']>;
  /** Value-taking flags that may also stand alone, mapped to their full form (`--inspect` → `--inspect=jsonl`). */
  bareFlagValues?: Record<string, string>;
  /** Stops cleanly on `ctx.signal` (provider request aborted, nothing recorded); others end at once. */
  abortable?: boolean;
  run(args: ParsedArgs, ctx: CommandContext): Promise<number | void>;
}
