import { CompactorError, Interrupted } from '../core/errors.js';

/**
 * The exit code of each error the user can fix (bad input, bad options, a window too small for
 * the fixed part of a request): 2. Library errors carry only a code; the CLI alone turns codes
 * into exit codes. An error whose code is not here is a failure of the tool itself (exit 1).
 */
const USER_ERROR_EXIT_CODES: Readonly<Record<string, number>> = {
  'invalid-input': 2,
  'invalid-options': 2,
  'session-conflict': 2,
  'window-too-small': 2,
};

/** 128 + the signal number, as shells report it: 130 (SIGINT), 143 (SIGTERM). */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/** The exit code the user sees for an error the user can fix, or for an interrupt; undefined otherwise. */
export function userExitCodeOf(e: unknown): number | undefined {
  if (Interrupted.isInstance(e)) return SIGNAL_EXIT_CODES[e.signalName];
  return CompactorError.isInstance(e) ? USER_ERROR_EXIT_CODES[e.code] : undefined;
}

/** The exit code of any error: the user's (2), an interrupt's (130, 143), or a failure of the tool (1). */
export function exitCodeOf(e: unknown): number {
  return userExitCodeOf(e) ?? 1;
}
