import { main } from './main.js';
import { watchInterrupts } from './interrupt.js';

// Entry used by the compiled bin (dist/src/bin/compactor.js) and `npm run compactor`.
// Tokenizer encoders are not freed here: importing them would load tiktoken's WASM for
// `--version` too, and the process exits right after anyway.
// Ctrl-C / SIGTERM: run and compact stop cleanly (see interrupt.ts); other commands end at once.
const interrupts = watchInterrupts();
process.exitCode = await main(process.argv.slice(2), { interrupts });
interrupts.dispose();
