import { createHash } from 'node:crypto';

/** How many summary answers of failed requests a server keeps for their retries, and their bytes. */
const MAX_KEPT = 64;
const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/** The headers that say whose credential paid; only the same credential gets the answer back. */
const CREDENTIALS = ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key'];

/**
 * Summary answers the upstream wrote during requests whose own answer then failed. The
 * request's turn was dropped, so the client's retry runs the same turn and asks for the same
 * summary: it gets this answer instead of paying for it again. Each is used once.
 */
export interface PaidSummaries {
  /** The kept answer of exactly this call (url, credential, body), taken out; else undefined. */
  take(key: string): string | undefined;
  keep(key: string, text: string): void;
}

export function createPaidSummaries(): PaidSummaries {
  // Insertion order is age: the oldest go first beyond the limits.
  const kept = new Map<string, string>();
  let bytes = 0;
  return {
    take(key) {
      const text = kept.get(key);
      if (text !== undefined) {
        kept.delete(key);
        bytes -= text.length;
      }
      return text;
    },
    keep(key, text) {
      if (text.length > MAX_KEPT_BYTES) return;
      const old = kept.get(key);
      if (old !== undefined) bytes -= old.length;
      kept.delete(key);
      kept.set(key, text);
      bytes += text.length;
      for (const [k, t] of kept) {
        if (kept.size <= MAX_KEPT && bytes <= MAX_KEPT_BYTES) break;
        kept.delete(k);
        bytes -= t.length;
      }
    },
  };
}

/** One call's key: where it goes, whose credential sends it, and its exact body. */
export function summaryKey(url: string, headers: Record<string, string | string[]>, body: string): string {
  const hash = createHash('sha256').update(url).update('\0');
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (const name of CREDENTIALS) hash.update(`${name}=${String(lower.get(name) ?? '')}\0`);
  return hash.update(body).digest('hex');
}

/**
 * A request's summary answers: offered back from `paid`, and the ones it paid for itself kept
 * there when its turn is dropped (`settle(false)`), forgotten when it is kept.
 */
export class RequestSummaries {
  private readonly made: [string, string][] = [];
  constructor(private readonly paid: PaidSummaries) {}

  /** An answer a dropped request paid for, taken out (this request keeps it on if dropped too). */
  take(key: string): string | undefined {
    const text = this.paid.take(key);
    if (text !== undefined) this.made.push([key, text]);
    return text;
  }

  /** An answer this request paid for. */
  paidFor(key: string, text: string): void {
    this.made.push([key, text]);
  }

  settle(kept: boolean): void {
    if (!kept) for (const [key, text] of this.made) this.paid.keep(key, text);
    this.made.length = 0;
  }
}
