import { freeEncoders } from '../../src/estimate/counters.js';
import { retentionSuite } from './retention-bench.js';
import { BenchOptionsSchema } from './retention-process.js';

// Child-process entry (see retention-process.ts): runs the retention pilot with the options
// given as JSON in argv[2], progress lines on stderr, the sections as one JSON line on stdout.
const options = BenchOptionsSchema.parse(JSON.parse(process.argv[2] ?? 'null'));
const sections = await retentionSuite.run({ ...options, log: (line) => process.stderr.write(`${line}\n`) });
freeEncoders();
process.stdout.write(`${JSON.stringify(sections)}\n`);
