import { crc32 } from 'node:zlib';

/**
 * Record framing for `events.jsonl`. Every line is one JSON object whose last field is
 * a CRC-32 of the object without it, so a line cut short or garbled by a crash is detected
 * instead of read as a smaller record. A write of several events ends with a commit line
 * (`{"commit":SEQ,…}`); events after the last commit line belong to a write that never
 * finished and are not part of the session.
 */

const CRC_SUFFIX = /,"crc":"([0-9a-f]{8})"}$/;

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** One framed line (without the newline) holding `value`, an object. */
export function frameLine(value: object): string {
  const body = JSON.stringify(value);
  return `${body.slice(0, -1)},"crc":"${hex(crc32(body))}"}`;
}

/**
 * The commit line for a write that ends at event `seq`; `carry` is a small note its writer
 * keeps with the write (what a session hands its next turn), read back by the loader.
 */
export function commitLine(seq: number, carry?: unknown): string {
  return frameLine(carry === undefined ? { commit: seq } : { commit: seq, carry });
}

/** What one line of the log holds. */
export type Frame =
  | { kind: 'event'; value: unknown }
  | { kind: 'commit'; seq: number; carry?: unknown }
  /** A line from before framing (no checksum): whole if it parses, committed on its own. */
  | { kind: 'legacy'; value: unknown }
  | { kind: 'bad'; reason: string };

/** Reads one line; never throws. */
export function readFrame(line: string): Frame {
  const m = CRC_SUFFIX.exec(line);
  if (!m) return parse(line, 'legacy');
  const body = `${line.slice(0, m.index)}}`;
  if (hex(crc32(body)) !== m[1]) return { kind: 'bad', reason: 'checksum mismatch (record damaged)' };
  const frame = parse(body, 'event');
  if (frame.kind !== 'event') return frame;
  const { commit, carry, ...rest } = frame.value as { commit?: unknown; carry?: unknown };
  if (typeof commit === 'number' && Object.keys(rest).length === 0)
    return carry === undefined ? { kind: 'commit', seq: commit } : { kind: 'commit', seq: commit, carry };
  return frame;
}

function parse(text: string, kind: 'event' | 'legacy'): Frame {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { kind: 'bad', reason: 'not a JSON object' };
    return { kind, value };
  } catch (e) {
    return { kind: 'bad', reason: `invalid JSON (${(e as Error).message})` };
  }
}
