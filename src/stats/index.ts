/** Session statistics (the pure part of `compactor stats`). */
export {
  computeSessionStats,
  type SessionStats,
  type ToolStats,
  type LargestResult,
  type StatsOptions,
} from './session-stats.js';
export type { SessionTimeline, TimelineTurn } from './timeline.js';
