import { describe } from '@jest/globals';
import { restateInstall, type RestateInstall } from '#dev/restate/harness.js';

/*
 * Every test gets jest.config.ts's 60 s, so a hung test fails within a minute. The few test
 * files that start processes (the compiled CLI, Node 24, Python, a Restate server) raise
 * their own limit with `jest.setTimeout(...)` and one of these, named by what they start.
 */

/** Tests that start the compiled CLI or another node process and wait for it to end. */
export const PROCESS_TEST_MS = 300_000;
/** Tests that start a restate-server and Node 24 workers (and restart them). */
export const RESTATE_TEST_MS = 600_000;

/**
 * The Restate install and the `describe` to run a Restate suite with: skipped where the
 * install is missing, but a loud error where COMPACTOR_RESTATE_REQUIRED is set (CI sets it),
 * so a skipped suite never passes for a run one.
 */
export function restateSuite(): {
  install: RestateInstall | null;
  describeWithRestate: typeof describe.skip;
} {
  const install = restateInstall();
  if (!install && process.env.COMPACTOR_RESTATE_REQUIRED)
    throw new Error('the Restate install is missing (COMPACTOR_RESTATE_HOME); .ci/run makes it');
  if (install) return { install, describeWithRestate: describe };
  // Skipped, and the name says why and how to run it.
  const skipped = ((name: string, fn: () => void) =>
    describe.skip(
      `${name} (skipped: no Restate install; COMPACTOR_RESTATE_HOME, see .ci/run)`,
      fn,
    )) as typeof describe.skip;
  return { install, describeWithRestate: skipped };
}
