import { isAscii, isUtf8 } from 'node:buffer';

/**
 * A large JSON session file as a one-byte string (memory). V8 stores a string with any
 * character above U+00FF at two bytes per character, so a 224 MB transcript with one em dash
 * became a 448 MB string next to its 224 MB buffer. Writing every non-ASCII character as a
 * JSON `\uXXXX` escape gives a string that parses to the same values at one byte a character.
 * Only for documents that start with `{` or `[` (JSON, JSON Lines): in JSON, non-ASCII text can
 * only sit inside strings, where an escape means the same character.
 */

/** Files from this size on are read escaped (smaller ones keep their text exactly, error columns included). */
export const ESCAPE_MIN_BYTES = 8 * 1024 * 1024;

const BOM = [0xef, 0xbb, 0xbf];

/** Length of a leading UTF-8 BOM (the decoder drops it too). */
function bomLength(buf: Uint8Array): number {
  return buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2] ? 3 : 0;
}

/** First byte after the BOM and ASCII white space. */
export function firstByte(buf: Uint8Array): number | undefined {
  let i = bomLength(buf);
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  return buf[i];
}

/**
 * The escaped text of `buf` when it is a large JSON document with non-ASCII characters, else
 * undefined (the caller decodes as usual). `buf` must be valid UTF-8 (checked here).
 */
export function escapedJsonText(buf: Buffer): string | undefined {
  if (buf.length < ESCAPE_MIN_BYTES) return undefined;
  const first = firstByte(buf);
  if (first !== 0x7b && first !== 0x5b) return undefined;
  const body = buf.subarray(bomLength(buf));
  if (isAscii(body)) return body.toString('latin1');
  if (!isUtf8(body)) return undefined; // the usual decoder reports it
  return escapeNonAscii(body).toString('latin1');
}

const HEX = '0123456789abcdef';

function writeEscape(out: Buffer, at: number, unit: number): number {
  out[at] = 0x5c; // \
  out[at + 1] = 0x75; // u
  for (let k = 0; k < 4; k++) out[at + 2 + k] = HEX.charCodeAt((unit >> (12 - 4 * k)) & 0xf);
  return at + 6;
}

/** Valid UTF-8 in, ASCII out: every code point above 0x7F as `\uXXXX` (two for astral ones). */
function escapeNonAscii(buf: Buffer): Buffer {
  let extra = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    // Lead bytes only: 2-byte → 6 chars (+4), 3-byte → 6 (+3), 4-byte → 12 (+8).
    if (b >= 0xf0) extra += 8;
    else if (b >= 0xe0) extra += 3;
    else if (b >= 0xc0) extra += 4;
  }
  const out = Buffer.allocUnsafe(buf.length + extra);
  let o = 0;
  for (let i = 0; i < buf.length;) {
    const b = buf[i]!;
    if (b < 0x80) {
      out[o++] = b;
      i++;
      continue;
    }
    let cp: number;
    if (b >= 0xf0) {
      cp =
        ((b & 0x07) << 18) |
        ((buf[i + 1]! & 0x3f) << 12) |
        ((buf[i + 2]! & 0x3f) << 6) |
        (buf[i + 3]! & 0x3f);
      i += 4;
    } else if (b >= 0xe0) {
      cp = ((b & 0x0f) << 12) | ((buf[i + 1]! & 0x3f) << 6) | (buf[i + 2]! & 0x3f);
      i += 3;
    } else {
      cp = ((b & 0x1f) << 6) | (buf[i + 1]! & 0x3f);
      i += 2;
    }
    if (cp > 0xffff) {
      const v = cp - 0x10000;
      o = writeEscape(out, o, 0xd800 + (v >> 10));
      o = writeEscape(out, o, 0xdc00 + (v & 0x3ff));
    } else o = writeEscape(out, o, cp);
  }
  return out;
}
