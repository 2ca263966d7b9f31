import { main } from './main.js';
import { freeEncoders } from '../estimate/counters.js';

// Entry used by the compiled bin (dist/src/bin/compactor.js) and `npm run compactor`.
const code = await main(process.argv.slice(2));
freeEncoders();
process.exitCode = code;
