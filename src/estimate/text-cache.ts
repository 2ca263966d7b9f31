/**
 * A bounded cache of token counts by text, in two generations: new entries go to the young
 * map; when it holds half the capacity it becomes the old one and the previous old map is
 * dropped whole. Evicting the oldest entry of one Map (`keys().next()` then `delete`) looked
 * O(1) but V8 scans the deleted slots at the front of the table on every call, so a full
 * cache made each miss cost time growing with its size (quadratic over a long session).
 */
export interface TextCache<K = string> {
  get(text: K): number | undefined;
  set(text: K, tokens: number): void;
}

export function createTextCache<K = string>(capacity: number): TextCache<K> {
  const half = Math.max(1, Math.floor(capacity / 2));
  let young = new Map<K, number>();
  let old = new Map<K, number>();
  return {
    get(text) {
      const hit = young.get(text);
      if (hit !== undefined) return hit;
      const aged = old.get(text);
      // Still in use: keep it through the next generation change.
      if (aged !== undefined) this.set(text, aged);
      return aged;
    },
    set(text, tokens) {
      if (young.size >= half) {
        old = young;
        young = new Map();
      }
      young.set(text, tokens);
    },
  };
}
