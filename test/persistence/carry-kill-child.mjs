/**
 * Child process for the carry kill test: plays a session's first turns in a session directory
 * from the compiled library (npm run build), prints each turn's decision, then prints `ready`
 * and waits, never closing the session, for the parent's SIGKILL.
 * Usage: node carry-kill-child.mjs DIR PLAN.json
 * PLAN.json: { options, opening, turns: [pending messages of each turn] }
 */
import { readFileSync, writeSync } from 'node:fs';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { Session } from '../../dist/src/session/session.js';
import { charsCounter } from '../../dist/src/estimate/counters.js';
import { createEstimator } from '../../dist/src/estimate/estimator.js';

const [dir, planFile] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const estimator = createEstimator({ counter: charsCounter });
const session = new Session({ sessionDir: dir, estimator, ...plan.options, history: plan.opening });
for (const pending of plan.turns) {
  const r = await session.runTurn({ pending });
  writeSync(1, `turn ${r.decision}\n`);
}
writeSync(1, 'ready\n');
setInterval(() => undefined, 60_000);
