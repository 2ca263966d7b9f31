import type { CompactorSession } from '../../session/index.js';

/** What closing a conversation to make room reads of it. */
interface Evictable {
  session: CompactorSession;
  /** Calls queued or running: a busy conversation is never closed. */
  active: number;
  bytes?: number;
}

/**
 * Closes the least recently used idle conversations beyond `max` in number or bytes (never
 * `keep`). A closed conversation's store keeps its lock until its queued writes have landed:
 * `closing` holds that wait, for a call that reopens it (see {@link untilClosed}).
 */
export function evictBeyond<S extends Evictable>(
  states: Map<string, S>,
  max: { count: number; bytes: number | undefined },
  keep: string,
  onEvict: ((id: string) => void) | undefined,
  closing: Map<string, Promise<void>>,
): void {
  let bytes = 0;
  if (max.bytes !== undefined) for (const s of states.values()) bytes += s.bytes ?? 0;
  const over = () => states.size > max.count || (max.bytes !== undefined && bytes > max.bytes);
  for (const [old, s] of states) {
    if (!over()) break;
    if (s.active > 0 || old === keep) continue;
    s.session.close();
    const landed = released(s.session);
    closing.set(old, landed);
    void landed.then(() => closing.get(old) === landed && closing.delete(old));
    states.delete(old);
    bytes -= s.bytes ?? 0;
    onEvict?.(old);
  }
}

/**
 * Resolves once a conversation closed to make room has released its store (at once when it is
 * open or was not closed so): reopened before that, its store would find its own lock held.
 */
export async function untilClosed(
  states: Map<string, unknown>,
  closing: Map<string, Promise<void>>,
  id: string,
): Promise<void> {
  const closed = states.has(id) ? undefined : closing.get(id);
  if (closed !== undefined) await closed;
}

/** Resolves once a closed session's store has released its lock (its queued writes landed). */
export function released(session: CompactorSession | undefined): Promise<void> {
  return session?.store?.flush?.().catch(() => undefined) ?? Promise.resolve();
}
