import * as projection from '#src/projection/index.js';
import type { Message } from '#src/messages/message.js';

/**
 * The projection functions with VT Code's defaults (preset `vtcode`) unless a test names
 * another preset: the conformance tests check VT Code's numbers, and the
 * library's own defaults (preset `compactor`) keep tool results until compaction.
 */
const vtcode = <O extends { policy?: Partial<projection.ClearingPolicy> }>(opts: O): O => ({
  ...opts,
  policy: { preset: 'vtcode', ...opts.policy },
});

export const clearOldToolResults = (m: readonly Message[], o: projection.ClearToolResultsOptions) =>
  projection.clearOldToolResults(m, vtcode(o));
export const clearOldToolResultsWithRecentBatches = (
  m: readonly Message[],
  o: projection.ClearToolResultsOptions,
) => projection.clearOldToolResultsWithRecentBatches(m, vtcode(o));
export const projectRequest = (m: readonly Message[], o: projection.ProjectRequestOptions) =>
  projection.projectRequest(m, vtcode(o));
