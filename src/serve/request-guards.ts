import { RequestRefusedError, UserError } from '../core/errors.js';
import { jsonStringEnd } from '../core/text.js';

/** How deep a request body's JSON may nest; real requests stay far below, a hostile one is refused. */
export const MAX_JSON_DEPTH = 512;

/**
 * Refuses JSON nested deeper than {@link MAX_JSON_DEPTH} before it is parsed: every later step
 * (checking, hashing, writing back) walks the document recursively, and a 100,000-deep body would
 * overflow the stack. One pass over the text, skipping strings.
 */
export function checkJsonDepth(text: string, max = MAX_JSON_DEPTH): void {
  scanDepth(text, 0, text.length, 0, max);
}

/**
 * The depth check from `from` up to `to` starting at `depth` (a string that begins before `to`
 * is skipped whole): where it stopped and the depth there.
 */
export function scanDepth(
  text: string,
  from: number,
  to: number,
  depth: number,
  max: number,
): [number, number] {
  let i = from;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = jsonStringEnd(text, i);
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) throw new UserError(`request body nests deeper than ${max} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return [i, depth];
}

/** The session id of a `/compactor/sessions/ID` path segment; a malformed `%` escape is a 400. */
export function sessionIdOfSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RequestRefusedError(400, 'the session id in the path is not valid percent-encoding');
  }
}

/**
 * The path of a request's URL. A request line such as `GET //` is no valid URL to parse
 * against a base; its path is then the text before any `?`, so it is answered (404 or
 * forwarded) like any other path instead of failing.
 */
export function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? '/', 'http://proxy').pathname;
  } catch {
    return (url ?? '/').split('?')[0]!;
  }
}
