import { oneLine } from './text.js';

/**
 * An error the user caused (bad file, bad flag, bad config). The CLI prints its message
 * as one line, no stack, and exits with {@link UserError.exitCode} (2 by default).
 */
export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}

/**
 * A library option is invalid (a bad value passed to `createCompactorSession`, `projectRequest`,
 * `recordUsage`, an adapter …). The message is one line: the option's path, then the problem.
 */
export class CompactorOptionsError extends UserError {
  /** Dotted path of the offending option, starting with the call that received it. */
  readonly path: string;
  constructor(path: string, problem: string) {
    super(oneLine(`${path}: ${problem}`));
    this.name = 'CompactorOptionsError';
    this.path = path;
  }
}
