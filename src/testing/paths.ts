import { generatePaths, type PathModel } from './generate-paths.js';
import { capacityRetryModel, compactionModel, hierarchicalSummaryModel, turnModel } from './models.js';
import type { MachinePath } from './path-types.js';
import { runPathOn, type PathRun, type RunPathOptions } from './run-path.js';
import { ModelPathError } from '../core/errors.js';

/*
 * Every machine's paths, walked from its graph on the first call for that machine (a few tens
 * of milliseconds; importing this module walks nothing), and the runner that drives one of them.
 */

const MODELS: Readonly<Record<string, PathModel>> = Object.fromEntries(
  [capacityRetryModel, hierarchicalSummaryModel, compactionModel, turnModel].map((m) => [m.machine.id, m]),
);

/** The paths of one model, walked once and kept. */
function pathsOnCall(model: PathModel): () => readonly MachinePath[] {
  let walked: readonly MachinePath[] | undefined;
  return () => (walked ??= Object.freeze(generatePaths(model)));
}

/** The capacity-retry ladder's paths (actors: prepareSummaryInput, requestSummary). */
export const capacityRetryPaths: () => readonly MachinePath[] = pathsOnCall(capacityRetryModel);
/** The two-band summary's paths (actors: prepareBands, capacityRetry). */
export const hierarchicalSummaryPaths: () => readonly MachinePath[] = pathsOnCall(hierarchicalSummaryModel);
/** One compaction pass's paths (actors: compactStandalone, adoptNativeWindow, measureInline, compactInline, capacityRetry, hierarchicalSummary, rebuildHistory, checkReceipt, amendSummary). */
export const compactionPaths: () => readonly MachinePath[] = pathsOnCall(compactionModel);
/** One turn's paths (actors: syncHistory, normalizeProjection, clearToolResults, estimatePressure, compaction, clearBeforeCompacting, fitRequest, rebuildProjection). */
export const turnPaths: () => readonly MachinePath[] = pathsOnCall(turnModel);

/**
 * Drives the real machine of `path` along it: the actors you give answer for real, every other
 * actor answers as the path says; the rules judge what happened. Resolves with the run, or
 * throws a plain Error naming the path and the first difference.
 */
export function runPath(path: MachinePath, options: RunPathOptions = {}): Promise<PathRun> {
  const model = MODELS[path.machine];
  if (model === undefined) throw new ModelPathError(`no machine named "${path.machine}" has paths`);
  const unknown = Object.keys(options.actors ?? {}).filter(
    (name) => !(name in model.machine.implementations.actors),
  );
  if (unknown.length > 0)
    throw new ModelPathError(
      `${path.machine} invokes no actor named ${unknown.join(', ')} (it invokes ${Object.keys(model.machine.implementations.actors).join(', ')})`,
    );
  return runPathOn(model.machine, path, model.oracle, options);
}
