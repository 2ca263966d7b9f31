import { LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { put } from '../messages/json-copy.js';
import type { Json } from '../messages/message.js';
import { jsonStringEnd } from '../core/text.js';

/**
 * Number literals whose text JSON.parse would not give back: `1.0` reads as 1, `2.50` as
 * 2.5, `1e5` as 100000, and integers beyond 2^53 lose digits. Provider files are parsed twice
 * when they may hold such a literal: once plainly (what importers read) and once losslessly;
 * the lossless twin of each parsed object is remembered, and round-trip residuals record where
 * the raw texts were so an export writes them back unchanged.
 */

/** A number kept as its source text; plain JSON.stringify writes the (nearest) number. */
export class RawNumber extends LosslessNumber {
  toJSON(): number {
    return Number(this.value);
  }
}

/**
 * True when a number literal outside strings would not survive Number → String (the test
 * {@link parseNumber} applies). One linear scan that skips string contents: a regex over the
 * whole text also matched digits inside strings ("2.50", hashes), so nearly every transcript
 * took the lossless second parse (19 s and 780 MB for a 21 MB file).
 */
function hasLossyNumberLiteral(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = jsonStringEnd(text, i);
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
      const literal = text.slice(i, j);
      if (String(Number(literal)) !== literal) return true;
      i = j - 1;
    }
  }
  return false;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

const twins = new WeakMap<object, unknown>();

function parseNumber(text: string): number | RawNumber {
  const n = Number(text);
  return String(n) === text ? n : new RawNumber(text);
}

function isContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  return typeof v === 'object' && v !== null && !(v instanceof LosslessNumber);
}

/** Links every plain container that holds a raw number (at any depth) to its lossless twin. */
function link(plain: unknown, lossless: unknown): boolean {
  if (lossless instanceof RawNumber) return true;
  if (!isContainer(plain) || !isContainer(lossless)) return false;
  let found = false;
  const own = plain as Record<string, unknown>;
  for (const key of Object.keys(plain)) {
    const value = own[key];
    if (!link(value, (lossless as Record<string, unknown>)[key])) continue;
    found = true;
    // JSON has no infinity: a literal beyond a double (1e400) is its text in the twin and null
    // here, so what is made of the plain value (a message, a residual) is JSON.
    if (typeof value === 'number' && !Number.isFinite(value)) own[key] = null;
  }
  if (found) twins.set(plain, lossless);
  return found;
}

/**
 * Remembers the raw number texts of `text`, parsed plainly as `plain` (no-op when it holds
 * none). True when it linked any.
 */
export function rememberRawNumbers(text: string, plain: unknown): boolean {
  if (!isContainer(plain) || !hasLossyNumberLiteral(text)) return false;
  let lossless: unknown;
  try {
    lossless = parseLossless(text, undefined, parseNumber);
  } catch {
    return false; // e.g. duplicate keys, which JSON.parse accepts: keep the plain values
  }
  return link(plain, lossless);
}

/** The lossless twin of a parsed value (raw numbers as {@link RawNumber}), or the value itself. */
export function withRawNumbers<T>(value: T): T {
  return isContainer(value) ? ((twins.get(value) as T | undefined) ?? value) : value;
}

/** Where a raw number sits in a value: a key path and the literal's text. */
export type RawNumberAt = [path: Array<string | number>, text: string];

/** Every raw number in `value` (read through the lossless twins of its containers), with its path. */
export function rawNumbersIn(value: unknown): RawNumberAt[] {
  const out: RawNumberAt[] = [];
  const walk = (value: unknown, path: Array<string | number>): void => {
    const v = withRawNumbers(value);
    if (v instanceof RawNumber) out.push([path, v.toString()]);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (isContainer(v)) for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(value, []);
  return out;
}

/**
 * {@link rawNumbersIn} of a list of values as parsed (an importer's items). A parsed container
 * that holds a raw number at any depth has a twin, so an item without one holds none and is not
 * walked: most bodies hold no such literal, and each item costs a lookup instead of a walk.
 */
export function rawNumbersInParsed(items: readonly unknown[]): RawNumberAt[] {
  const out: RawNumberAt[] = [];
  items.forEach((item, i) => {
    if (!isContainer(item) || !twins.has(item)) return;
    for (const [path, text] of rawNumbersIn(item)) out.push([[i, ...path], text]);
  });
  return out;
}

/**
 * `value` with the raw texts put back wherever the number at the path still equals the
 * literal's value (a changed value keeps its new number). Containers on a changed path are
 * copied, never mutated: they may be shared with a stored residual.
 */
export function restoreRawNumbers(value: Json, at: readonly RawNumberAt[]): Json {
  let out: unknown = value;
  for (const [path, text] of at) out = restoreOne(out, path, text);
  return out as Json;
}

function restoreOne(v: unknown, path: ReadonlyArray<string | number>, text: string): unknown {
  if (path.length === 0) {
    const n = Number(text);
    // A literal beyond a double reads as null (see link): null where it was is the same value.
    const same = Number.isFinite(n) ? typeof v === 'number' && v === n : v === null;
    return same ? new RawNumber(text) : v;
  }
  if (!isContainer(v)) return v;
  const [key, ...rest] = path;
  const child = (v as Record<string | number, unknown>)[key];
  if (child === undefined) return v;
  const next = restoreOne(child, rest, text);
  if (next === child) return v;
  const copy = (Array.isArray(v) ? [...v] : { ...v }) as Record<string | number, unknown>;
  put(copy, String(key), next);
  return copy;
}

/** JSON.stringify that writes {@link RawNumber}s as their source text. */
export function stringifyWithRawNumbers(value: unknown, space?: number): string {
  return stringifyLossless(value, undefined, space) ?? 'null';
}

/**
 * After a document was parsed in pieces (each entry and the skeleton around them remembered
 * on their own): links the top-level containers to lossless twins built from their children's
 * twins, so {@link withRawNumbers} of the whole document sees every raw number.
 */
export function linkAssembledRawNumbers(doc: unknown): void {
  relink(doc, 2);
}

function relink(plain: unknown, depth: number): unknown {
  if (!isContainer(plain)) return plain;
  const own = twins.get(plain);
  if (depth === 0) return own ?? plain;
  // The skeleton's own twin holds its raw numbers (and entry placeholders, replaced here).
  const base = (own ?? plain) as Record<string, unknown>;
  const out = (Array.isArray(base) ? [...(base as unknown[])] : { ...base }) as Record<string, unknown>;
  let changed = false;
  for (const key of Object.keys(plain)) {
    const child = (plain as Record<string, unknown>)[key];
    const twin = isContainer(child) ? relink(child, depth - 1) : base[key];
    if (twin !== child) changed = true;
    Object.defineProperty(out, key, { value: twin, enumerable: true, writable: true, configurable: true });
  }
  if (changed) twins.set(plain, out);
  else twins.delete(plain);
  return changed ? out : plain;
}
