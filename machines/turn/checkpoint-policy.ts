/** What a turn's persisted snapshot shows of where it is. */
export interface TurnSnapshotView {
  value?: unknown;
  context?: { compaction?: unknown };
}

/**
 * Whether a turn has reached a step that cannot be repeated for free, and so must be
 * checkpointed: the compaction pass (provider calls) or anything after it. Every step before
 * is a pure function of the history and the settings, so a turn that stops there simply runs again.
 */
export function isPastFreeSteps(snapshot: TurnSnapshotView): boolean {
  const v = snapshot.value as { working?: unknown } | string | undefined;
  return (
    (typeof v === 'object' && v?.working === 'compacting') || (snapshot.context?.compaction ?? null) !== null
  );
}
