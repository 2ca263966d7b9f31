/** Identifiers a summary must not lose: UUIDs and long hex hashes with a digit. */
export const ID_PATTERN =
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{10,40}\b/g;

/** Issue-style numbers, from the user's words only: in code `#213547` is a colour, `&#8212;` a dash. */
export const ISSUE_PATTERN = /(?<![&\w])#\d{2,7}\b/g;

/** The identifiers a user's text names, first seen first, each once. */
export function userIds(text: string): string[] {
  return [...new Set([...(text.match(ID_PATTERN) ?? []), ...(text.match(ISSUE_PATTERN) ?? [])])];
}
