import { isAbsolute, resolve } from 'node:path';
import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';

/**
 * The single positional argument of a command (FILE, DIR …), resolved against the working
 * directory; `shown` keeps it as typed for reports. Missing or extra positionals are
 * one-line user errors.
 */
export function singlePositional(
  command: string,
  positionals: readonly string[],
  ctx: Pick<CommandContext, 'cwd'>,
  name = 'FILE',
): { path: string; shown: string } {
  const [arg, ...extra] = positionals;
  if (arg === undefined) throw new UserError(`${command}: missing ${name} (see compactor ${command} --help)`);
  if (extra.length > 0) throw new UserError(`${command}: unexpected argument '${extra[0]}'`);
  return { path: isAbsolute(arg) ? arg : resolve(ctx.cwd, arg), shown: arg };
}
