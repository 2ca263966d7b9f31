import { readFileSync } from 'node:fs';
import TestSequencer from '@jest/test-sequencer';

/*
 * Jest runs the files it has timed before longest first, and the others by size. On a fresh
 * machine (CI) nothing is timed, and a short file that starts processes or drives whole agent
 * loops can start last and keep one worker busy long after the other is done. Such files say
 * so: they raise their time limit, or they use the agent loops of dev/loops. Untimed, they go
 * first (by size among themselves); everything else keeps Jest's order.
 */
const LONG = /jest\.setTimeout\(|#dev\/loops\//;

export default class LongFirstSequencer extends TestSequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const long = (test) => test.duration == null && LONG.test(readFileSync(test.path, 'utf8'));
    const first = sorted.filter(long);
    return [...first, ...sorted.filter((test) => !first.includes(test))];
  }
}
