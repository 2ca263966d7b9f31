import { redactKnown, redactSecrets } from '../core/redact.js';
import { oneLine } from '../core/text.js';
import { MAX_FAILURE_MESSAGE_CHARS } from '../../machines/shared/failure.js';

/**
 * Removes secrets from provider-facing text: every explicitly known secret (the route's
 * API key), then everything {@link redactSecrets} recognises (env values, bearer tokens,
 * key headers). Known secrets go first so short or unusual keys are caught too.
 */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  return redactSecrets(redactKnown(text, secrets));
}

/** One line, at most `max` characters, secrets removed. */
export function boundedCause(
  text: string,
  secrets: readonly (string | undefined)[] = [],
  max = MAX_FAILURE_MESSAGE_CHARS,
): string {
  return oneLine(redact(text, secrets), max);
}
