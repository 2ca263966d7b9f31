import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Message } from '../messages/message.js';

/**
 * Message lists written by reference. A turn works on the session's history as it was when
 * the turn started (its base), which the session's event log already holds durably; every
 * list the turn derives from it (the synced history, projections, the compacted history)
 * mostly holds the very same message objects. So a list is written as runs of indexes
 * (`[start, end)`) into the base followed by the messages the turn made itself (a summary, a
 * cleared result's stub), each of those written once however many lists hold it: a checkpoint
 * of a few kilobytes plus what the turn wrote, instead of the whole conversation.
 */

/** One list: runs of indexes into the base followed by the written messages. */
export const ListJsonSchema = z.array(
  z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
);
/** See {@link ListJsonSchema}. */
export type ListJson = z.infer<typeof ListJsonSchema>;

/** Which history a checkpoint's runs index into: its length and a print of its ends. */
export const BaseJsonSchema = z.object({
  /** The store ref of the base list (the turn's input history). */
  ref: z.string().min(1),
  count: z.number().int().nonnegative(),
  print: z.string().min(1),
});
/** See {@link BaseJsonSchema}. */
export type BaseJson = z.infer<typeof BaseJsonSchema>;

/**
 * A cheap print of a history: its length and its first and last messages. The event log only
 * grows at its end, so a history the session loads again either is the base or differs here.
 */
export function historyPrint(history: readonly Message[]): string {
  const n = history.length;
  const ends = n === 0 ? '' : `${JSON.stringify(history[0])}\n${JSON.stringify(history[n - 1])}`;
  return createHash('sha256').update(`${n}\n${ends}`).digest('hex').slice(0, 32);
}

/** Writes lists against one base; a list already written is not encoded again. */
export class ListEncoder {
  private index: Map<Message, number> | undefined;
  private readonly done = new WeakMap<readonly Message[], ListJson>();
  /** Messages the turn made itself, in the order first met (indexes after the base's). */
  readonly written: Message[] = [];

  constructor(private readonly base: readonly Message[]) {}

  encode(list: readonly Message[]): ListJson {
    const known = this.done.get(list);
    if (known) return known;
    const out: ListJson = [];
    let run: [number, number] | null = null;
    for (const m of list) {
      const i = this.indexOf(m);
      if (run !== null && run[1] === i) {
        run[1] = i + 1;
      } else {
        run = [i, i + 1];
        out.push(run);
      }
    }
    this.done.set(list, out);
    return out;
  }

  private indexOf(m: Message): number {
    if (!this.index) {
      const index = new Map<Message, number>();
      this.base.forEach((b, i) => {
        if (!index.has(b)) index.set(b, i);
      });
      this.index = index;
    }
    let i = this.index.get(m);
    if (i === undefined) {
      i = this.base.length + this.written.push(m) - 1;
      this.index.set(m, i);
    }
    return i;
  }
}

/** The list {@link ListEncoder.encode} wrote, over the base and the written messages; undefined when a run lies outside them. */
export function decodeList(
  json: ListJson,
  base: readonly Message[],
  written: readonly Message[],
): Message[] | undefined {
  const out: Message[] = [];
  const n = base.length;
  for (const [start, end] of json) {
    if (end > n + written.length || start > end) return undefined;
    for (let i = start; i < end; i++) out.push(i < n ? base[i]! : written[i - n]!);
  }
  return out;
}
