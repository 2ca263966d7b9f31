/** The longest session id the proxy accepts, in bytes. */
const MAX_SESSION_ID_BYTES = 256;

/**
 * A session id the proxy can use: printable ASCII (it is echoed in a response header, which
 * carries nothing else safely), 1 to 256 bytes, without spaces at either end. Returns the
 * id, or undefined when it is not usable. Every place an id comes from goes through here.
 */
export function validSessionId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return id.length <= MAX_SESSION_ID_BYTES && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(id)
    ? id
    : undefined;
}

/** Why an id is refused, in one line that does not repeat the id. */
export const SESSION_ID_RULE = `a session id is 1 to ${MAX_SESSION_ID_BYTES} printable ASCII characters (no control characters, no spaces at either end)`;
