import { parseArgs } from 'node:util';
import type { Command, CommandContext } from './command.js';
import { commands } from './commands/index.js';
import { VERSION } from '../version.js';
import { UserError } from '../core/errors.js';
import { oneLine } from '../core/text.js';
import { redactSecrets } from '../core/redact.js';
import { userExitCodeOf } from './exit-codes.js';
import { Interrupted, interruptedLine, type Interrupts } from './interrupt.js';

// Only small, dependency-free modules are imported above: `--version` and `--help` load
// nothing else. A command's module (and zod, the tokenizer, providers, machines with it)
// is imported when that command runs, and the config loader only then too.

const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
} as const;

/**
 * Joins `--flag -5` into `--flag=-5` for flags that take a value. Node's parser would take the
 * dash for a forgotten value and stop with "argument is ambiguous"; joined, the value reaches the
 * flag's own check, which says in plain words what the flag expects. Nothing after `--` changes.
 */
function joinDashValues(args: string[], options: Record<string, { type: string }>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return [...out, ...args.slice(i)];
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    const next = args[i + 1];
    if (Object.hasOwn(options, name) && options[name].type === 'string' && /^-[\d.]/.test(next ?? '')) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** A command's bare flags (e.g. `--inspect` alone) in the `--flag=value` form they stand for. */
function withBareFlagValues(command: Command, args: string[]): string[] {
  const bare = command.bareFlagValues;
  return bare ? args.map((a) => (Object.hasOwn(bare, a) ? bare[a] : a)) : args;
}

function topHelp(list: Array<[string, string]>): string {
  const width = Math.max(...list.map(([n]) => n.length), 4);
  return [
    'compactor — keeps long LLM-agent sessions inside the model context window',
    '',
    'Usage: compactor <command> [flags]',
    '',
    'Commands:',
    ...list.map(([n, s]) => `  ${n.padEnd(width)}  ${s}`),
    '',
    'Every command takes --help, --json and --config FILE (default ./compactor.config.json).',
    'compactor --version prints the version.',
  ].join('\n');
}

/**
 * Runs the CLI. Returns the exit code instead of exiting, so tests can call it in-process.
 * User errors print one line (`compactor: …`) and return 2; nothing partial is written.
 */
export async function main(
  argv: string[],
  io: Partial<CommandContext> & { interrupts?: Interrupts } = {},
): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  try {
    const [name, ...rest] = argv;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      const list = Object.entries(commands).map(([n, entry]): [string, string] => [n, entry.summary]);
      stdout.write(`${topHelp(list)}\n`);
      return name === undefined ? 2 : 0;
    }
    if (name === '--version' || name === '-v') {
      stdout.write(`${VERSION}\n`);
      return 0;
    }
    // Own keys only: `constructor` or `__proto__` must not resolve to Object.prototype members.
    const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
    if (!entry) throw new UserError(`unknown command '${name}' (see compactor --help)`);
    const command: Command = await entry.load();
    if (command.abortable) io.interrupts?.claim();
    let parsed;
    try {
      const options = { ...command.options, ...COMMON_OPTIONS };
      parsed = parseArgs({
        args: joinDashValues(withBareFlagValues(command, rest), options),
        options,
        allowPositionals: true,
        strict: true,
      });
    } catch (e) {
      throw new UserError(`${name}: ${oneLine((e as Error).message)}`);
    }
    if (parsed.values.help) {
      stdout.write(`${command.help.trimEnd()}\n`);
      return 0;
    }
    const cwd = io.cwd ?? process.cwd();
    const { loadConfig } = await import('./config.js');
    const config = loadConfig(cwd, parsed.values.config as string | undefined);
    const ctx: CommandContext = {
      stdout,
      stderr,
      env,
      cwd,
      stderrIsTTY: io.stderrIsTTY ?? Boolean((stderr as NodeJS.WriteStream).isTTY),
      config,
      ...(command.abortable && (io.interrupts ?? io.signal)
        ? { signal: io.interrupts?.signal ?? io.signal }
        : {}),
    };
    const code = await command.run(parsed as never, ctx);
    return typeof code === 'number' ? code : 0;
  } catch (e) {
    return reportFailure(e, stderr, env);
  }
}

/** Prints the one line for a failed or interrupted command and returns its exit code. */
function reportFailure(e: unknown, stderr: NodeJS.WritableStream, env: NodeJS.ProcessEnv): number {
  const code = userExitCodeOf(e);
  if (Interrupted.isInstance(e)) {
    stderr.write(`${interruptedLine(e)}\n`);
    return code ?? 1;
  }
  if (code !== undefined) {
    stderr.write(`compactor: ${redactSecrets(oneLine((e as Error).message, 600), env)}\n`);
    return code;
  }
  const err = e as Error;
  stderr.write(`compactor: internal error: ${redactSecrets(oneLine(err?.message ?? String(e)), env)}\n`);
  if (env.COMPACTOR_DEBUG) stderr.write(`${redactSecrets(String(err?.stack), env)}\n`);
  return 1;
}
