import { main } from './main.js';

// Entry used by the compiled bin (dist/src/bin/compactor.js) and `npm run compactor`.
// Tokenizer encoders are not freed here: importing them would load tiktoken's WASM for
// `--version` too, and the process exits right after anyway.
process.exitCode = await main(process.argv.slice(2));
