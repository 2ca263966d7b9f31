import { main } from './main.js';
import { freeEncoders } from '../estimate/counters.js';

// Entry used by bin/compactor.js and `npm run compactor`.
const code = await main(process.argv.slice(2));
freeEncoders();
process.exitCode = code;
