/** One turn of a session timeline: the request before the recorded assistant message. */
export interface TimelineTurn {
  /** Index of the assistant message in the session. */
  index: number;
  /** Tokens of the live history before projection. */
  before: number;
  /** Tokens of the request sent (after clearing, and after compaction when it ran). */
  after: number;
  /** Tool results cleared in the request. */
  cleared: number;
  /** Compaction ran at this turn. */
  compacted: boolean;
}

/** A session replayed turn by turn through a Compactor session with the offline summarizer (built by the CLI's chart). */
export interface SessionTimeline {
  turns: TimelineTurn[];
  capacity: number | null;
  localTrigger: number;
  compactionThreshold: number | null;
}
