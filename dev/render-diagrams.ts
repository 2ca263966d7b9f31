/**
 * `npm run diagrams`: renders every machine to diagrams/<machine>.{mmd,dot,svg} and
 * diagrams/README.md. Offline: Graphviz runs as WASM (@viz-js/viz).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../src/io/atomic-write.js';
import { renderDiagrams } from './diagrams/render.js';

const outDir = join(process.cwd(), 'diagrams');
mkdirSync(outDir, { recursive: true });
const files = await renderDiagrams();
for (const [name, contents] of files) writeFileAtomic(join(outDir, name), contents);
console.log(`wrote ${files.size} files to diagrams/`);
