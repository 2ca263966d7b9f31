import { createHash } from 'node:crypto';
import { put } from '../messages/json-copy.js';
import type { Json, Message } from '../messages/message.js';

/**
 * Round-trip residuals (unknown provider fields survive byte for byte).
 *
 * An importer converts provider objects to canonical messages, then rebuilds the provider
 * objects from those messages with the exporter and stores the difference (a {@link Patch})
 * plus a fingerprint of the canonical fields. On export, an unchanged message gets the
 * whole patch back (exact original JSON); a message that was changed since import (e.g. a
 * cleared tool result) keeps only its unknown top-level keys, so stale content never
 * comes back.
 */
export type Patch =
  | { replace: Json }
  | {
      /** Keys present in the original but not in the rebuilt object (values verbatim). */
      set?: Record<string, Json>;
      /** Keys the rebuild added that the original did not have. */
      del?: string[];
      /** Per-key patches of nested objects. */
      sub?: Record<string, Patch>;
      /** Per-index patches of same-length arrays. */
      items?: Record<string, Patch>;
    };

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/*
 * Keys are looked up and written as own keys: an original may hold a key named `__proto__`
 * (JSON can), which `in` finds on every object and an assignment would make the prototype.
 */

/** Deep JSON equality (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    // Loops, not key arrays: this runs on every imported message and every option history.
    let n = 0;
    for (const k in a) {
      if (!Object.hasOwn(a, k) || a[k] === undefined) continue;
      n++;
      if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
    }
    return n === definedKeyCount(b);
  }
  return false;
}

/** Own keys whose value is not undefined. */
function definedKeyCount(o: Record<string, Json>): number {
  let n = 0;
  for (const k in o) if (Object.hasOwn(o, k) && o[k] !== undefined) n++;
  return n;
}

/** The patch that turns `built` into `original`, or undefined when they are already equal. */
export function diff(original: Json, built: Json | undefined): Patch | undefined {
  if (built !== undefined && jsonEqual(original, built)) return undefined;
  if (isObject(original) && isObject(built)) {
    const p: { set?: Record<string, Json>; del?: string[]; sub?: Record<string, Patch> } = {};
    for (const [k, v] of Object.entries(original)) {
      if (v === undefined) continue;
      if (!Object.hasOwn(built, k) || built[k] === undefined) put((p.set ??= {}), k, v);
      else {
        const d = diff(v, built[k]);
        if (d) put((p.sub ??= {}), k, d);
      }
    }
    for (const k of Object.keys(built))
      if (built[k] !== undefined && !Object.hasOwn(original, k)) (p.del ??= []).push(k);
    return p;
  }
  if (Array.isArray(original) && Array.isArray(built) && original.length === built.length) {
    const items: Record<string, Patch> = {};
    original.forEach((v, i) => {
      const d = diff(v, built[i]);
      if (d) items[String(i)] = d;
    });
    return { items };
  }
  return { replace: original };
}

/** Applies a full patch; where the shape no longer matches, the built value wins. */
export function applyPatch(built: Json, patch: Patch): Json {
  if ('replace' in patch) return patch.replace;
  if (patch.items && Array.isArray(built)) {
    return built.map((v, i) => {
      const p = patch.items?.[String(i)];
      return p ? applyPatch(v, p) : v;
    });
  }
  if (!isObject(built)) return built;
  const out: Record<string, Json> = { ...built };
  for (const k of patch.del ?? []) delete out[k];
  for (const [k, p] of Object.entries(patch.sub ?? {}))
    if (Object.hasOwn(out, k)) put(out, k, applyPatch(out[k], p));
  return { ...out, ...(patch.set ?? {}) };
}

/**
 * Applies only the unknown top-level keys of each item (`set`) — used when the canonical
 * message changed after import, so known fields come from the canonical message.
 */
export function applyExtrasOnly(built: Json[], patch: Patch): Json[] {
  if ('replace' in patch) return built;
  const items = patch.items ?? {};
  return built.map((item, i) => {
    const p = items[String(i)];
    if (!p || 'replace' in p || !p.set || !isObject(item)) return item;
    const set: Record<string, Json> = {};
    for (const [k, v] of Object.entries(p.set)) if (!Object.hasOwn(item, k)) put(set, k, v);
    return { ...item, ...set };
  });
}

/** A short hash of the fields exporters read (metadata and derived toolName excluded). */
export function fingerprint(messages: readonly Message[]): string {
  const h = createHash('sha1');
  for (const m of messages) {
    h.update(
      JSON.stringify([
        m.role,
        m.content,
        m.toolCalls ?? null,
        m.toolCallId ?? null,
        m.reasoning ?? null,
        m.reasoningDetails ?? null,
      ]),
    );
    h.update('\u0000');
  }
  return h.digest('base64url').slice(0, 16);
}
