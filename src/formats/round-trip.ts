import type { Json, Message } from '../messages/message.js';
import { rawNumbersInParsed, restoreRawNumbers, type RawNumberAt } from './raw-numbers.js';
import { applyExtrasOnly, applyPatch, diff, fingerprint, type Patch } from './residual.js';
import { toolNamer } from './tool-names.js';
import type { ExportFormat } from './types.js';

/** The formats whose messages carry round-trip markers (Gemini is a proxy protocol, not an export target). */
export type RoundTripFormat = ExportFormat | 'gemini';

/**
 * Stored in `metadata.roundTrip` of messages imported from a provider format: which
 * provider objects (a "group") they came from, and on the group's first message the
 * fingerprint and residual patch that restore the original JSON exactly.
 */
export interface RoundTrip {
  format: RoundTripFormat;
  group: number;
  fp?: string;
  patch?: Patch;
  /** Number literals whose text JSON.parse loses (`1.0`, big integers), by path in the group. */
  nums?: RawNumberAt[];
  /** Index of the group's first provider object in the list, when it is not `group`. */
  at?: number;
  /** How many provider objects the group holds, when more than one. */
  items?: number;
}

/** Provider objects and the canonical messages made from them. */
export interface ImportedGroup {
  raw: Json[];
  messages: Message[];
}

/** Builds provider objects from a run of canonical messages (the plain exporter). */
export type GroupBuilder = (messages: readonly Message[]) => Json[];

/** How many messages from `start` form one provider group when no round-trip marker says so. */
export type DefaultGrouping = (messages: readonly Message[], start: number) => number;

function roundTripOf(m: Message, format: RoundTripFormat): RoundTrip | undefined {
  const rt = m.metadata?.roundTrip as RoundTrip | undefined;
  return rt && typeof rt === 'object' && rt.format === format && typeof rt.group === 'number'
    ? rt
    : undefined;
}

/** The list items (first and last index) of the group a message came from, or undefined. */
export function itemsOf(m: Message, format: RoundTripFormat): [number, number] | undefined {
  const rt = roundTripOf(m, format);
  if (rt === undefined) return undefined;
  const first = rt.at ?? rt.group;
  return [first, first + (rt.items ?? 1) - 1];
}

/** The provider object (group) of the imported document a message came from, or undefined. */
export function groupOf(m: Message, format: RoundTripFormat): number | undefined {
  return roundTripOf(m, format)?.group;
}

/**
 * Marks each group's messages with their group number and stores, on the first one, what
 * the plain exporter gets wrong about the original objects. `groups` may be made one at a time.
 */
export function attachRoundTrip(
  format: RoundTripFormat,
  groups: Iterable<ImportedGroup>,
  build: GroupBuilder,
): Message[] {
  const out: Message[] = [];
  // Results are named here, in the one copy made anyway, as fillToolNames would name them after.
  const nameOf = toolNamer();
  let group = -1;
  let at = 0;
  for (const g of groups) {
    group++;
    const first = at;
    at += g.raw.length;
    if (g.messages.length === 0) continue;
    const patch = diff(g.raw, build(g.messages));
    const nums = rawNumbersInParsed(g.raw);
    g.messages.forEach((m, i) => {
      const rt: RoundTrip = { format, group };
      // Where the group's objects sit, so the request's bytes can be read item for item.
      if (first !== group) rt.at = first;
      if (g.raw.length > 1) rt.items = g.raw.length;
      if (i === 0 && patch) Object.assign(rt, { fp: fingerprint(g.messages), patch });
      if (i === 0 && nums.length > 0) rt.nums = nums;
      const metadata = { ...(m.metadata ?? {}), roundTrip: rt as unknown as Json };
      const toolName = nameOf(m);
      out.push(toolName === undefined ? { ...m, metadata } : { ...m, metadata, toolName });
    });
  }
  return out;
}

/**
 * Exports messages as provider objects: consecutive messages of one imported group are
 * rebuilt together and get their residual back (all of it when unchanged since import,
 * only unknown top-level keys otherwise); unmarked messages use the format's default grouping.
 */
export function exportGroups(
  format: RoundTripFormat,
  messages: readonly Message[],
  build: GroupBuilder,
  defaultGrouping: DefaultGrouping,
  /** Format-specific nested fields to restore when only the extras apply (a changed message). */
  restoreNested: (built: Json[], patch: Patch) => Json[] = (b) => b,
): Json[] {
  const out: Json[] = [];
  let i = 0;
  while (i < messages.length) {
    const rt = roundTripOf(messages[i], format);
    let n = 1;
    if (rt) {
      while (i + n < messages.length && roundTripOf(messages[i + n], format)?.group === rt.group) n++;
    } else n = Math.max(1, defaultGrouping(messages, i));
    const run = messages.slice(i, i + n);
    let built = build(run);
    if (rt?.patch) {
      built =
        rt.fp === fingerprint(run)
          ? (applyPatch(built, rt.patch) as Json[])
          : restoreNested(applyExtrasOnly(built, rt.patch), rt.patch);
    }
    if (rt?.nums) built = restoreRawNumbers(built, rt.nums) as Json[];
    out.push(...built);
    i += n;
  }
  return out;
}
