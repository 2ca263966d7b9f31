import { freeEncoders } from '../../src/estimate/counters.js';
import { runBench } from './run-bench.js';

/** Entry of `npm run bench` (see {@link runBench} for the flags). */
process.exitCode = await runBench(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
freeEncoders();
