import type { Json } from './message.js';

/*
 * Copies of JSON values kept in messages. JSON can hold a key named `__proto__` (JSON.parse makes
 * it an own key); assigned to a new object it would set the object's prototype instead, so
 * zod's records leave it out and the value lost it. Here every object is a new plain object
 * whose keys come in the order given, that one defined as data so it stays a key.
 */

/** Puts `value` under `key` of `out` as its own data, `__proto__` included. */
export function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  else out[key] = value;
}

/**
 * A copy of `v`, known to be JSON made of plain objects and arrays: every object and array new,
 * keys in their order, the texts shared.
 */
export function copyOfJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copyOfJson) as T;
  const out: Record<string, unknown> = {};
  // The check written out here rather than through `put`: this copy is on every turn's path.
  for (const k in v) {
    if (k === '__proto__') put(out, k, copyOfJson(v[k]));
    else out[k] = copyOfJson(v[k]);
  }
  return out as T;
}

/** Where a value stops being JSON: the path to the bad part and what is wrong with it. */
export interface NotJson {
  path: Array<string | number>;
  message: string;
}

/**
 * A copy of `v` as {@link copyOfJson} makes it, when `v` is JSON; otherwise undefined, with the
 * first bad part in `bad`. Objects are taken as a zod record takes them: plain objects (a null
 * prototype too) with their own enumerable string keys; numbers must be finite.
 */
export function checkedCopyOfJson(v: unknown, bad: NotJson): Json | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : fail(bad, `expected JSON, received ${v}`);
  if (Array.isArray(v)) {
    const out = new Array<Json>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = checkedCopyOfJson(v[i], bad);
      if (x === undefined) return failAt(bad, i);
      out[i] = x;
    }
    return out;
  }
  return isRecord(v) ? checkedCopyOfObject(v, bad) : fail(bad, `expected JSON, received ${kindOf(v)}`);
}

/** {@link checkedCopyOfJson} of a value that must be an object (JSON's `{…}`). */
export function checkedCopyOfObject(v: unknown, bad: NotJson): { [key: string]: Json } | undefined {
  if (!isObjectWithStringKeys(v, bad)) return undefined;
  const out: { [key: string]: Json } = {};
  for (const k of Object.keys(v)) {
    const x = checkedCopyOfJson(v[k], bad);
    if (x === undefined) return failAt(bad, k);
    put(out, k, x);
  }
  return out;
}

/** A new object with the own keys of the object `v` and their values as they are, or undefined (see `bad`). */
export function checkedCopyOfRecord(v: unknown, bad: NotJson): Record<string, unknown> | undefined {
  if (!isObjectWithStringKeys(v, bad)) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) put(out, k, v[k]);
  return out;
}

function isObjectWithStringKeys(v: unknown, bad: NotJson): v is Record<string, unknown> {
  if (!isRecord(v)) return fail(bad, `expected object, received ${kindOf(v)}`) ?? false;
  for (const s of Object.getOwnPropertySymbols(v))
    if (Object.prototype.propertyIsEnumerable.call(v, s))
      return fail(bad, 'expected string keys, received a symbol') ?? false;
  return true;
}

function fail(bad: NotJson, message: string): undefined {
  bad.message = `Invalid input: ${message}`;
  return undefined;
}

/** Adds `key` in front of the path of a failure found below it. */
function failAt(bad: NotJson, key: string | number): undefined {
  bad.path.unshift(key);
  return undefined;
}

/** What zod's records take for an object: a plain object, or one whose prototype chain says so. */
function isRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto === Object.prototype || proto === null) return true;
  const ctor = (v as { constructor?: unknown }).constructor;
  if (typeof ctor !== 'function') return true;
  const p = (ctor as { prototype?: unknown }).prototype;
  return typeof p === 'object' && p !== null && Object.hasOwn(p, 'isPrototypeOf');
}

function kindOf(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  const ctor = (v as { constructor?: unknown }).constructor;
  return typeof ctor === 'function' && ctor.name !== '' ? ctor.name : 'object';
}
