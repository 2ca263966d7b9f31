/** Structural view of framework values for comparison: URLs by href, bytes by value, undefined fields dropped. */
export function structuralView(v: unknown): unknown {
  if (v instanceof URL) return { url: v.href };
  if (v instanceof Uint8Array) return { bytes: Array.from(v) };
  if (Array.isArray(v)) return v.map(structuralView);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, structuralView(x)]),
    );
  return v;
}
