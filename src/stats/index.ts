/** Session statistics (the pure part of `compactor stats`). */
export {
  computeSessionStats,
  type SessionStats,
  type ToolStats,
  type LargestResult,
  type StatsOptions,
} from './session-stats.js';
export {
  sessionTimeline,
  type SessionTimeline,
  type TimelineTurn,
  type TimelineOptions,
} from './timeline.js';
export { compactOnce, type CompactOnceResult, type CompactOnceOptions } from './compact-once.js';
