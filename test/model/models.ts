import type { MachineModel } from '../support/graph-helpers.js';
import { capacityRetryModel } from './models/capacity-retry.model.js';
import { compactionModel } from './models/compaction.model.js';
import { hierarchicalSummaryModel } from './models/hierarchical-summary.model.js';
import { turnModel } from './models/turn.model.js';

/** Every machine's model, for the coverage and persistence suites. */
export const ALL_MODELS: readonly MachineModel[] = [
  turnModel,
  compactionModel,
  capacityRetryModel,
  hierarchicalSummaryModel,
];
