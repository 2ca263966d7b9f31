// Runs inside the consumer project (plain node, no TypeScript): imports every entry of the
// installed package's exports map, then projects a bundled session through the library.
// Usage: node import-entries.mjs SESSION_FILE. Prints one line per check; exit 1 on failure.
/* global console, process */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(require.resolve('context-compactor/package.json'), 'utf8'));
const optionalPeers = new Set(
  Object.entries(pkg.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta?.optional === true)
    .map(([name]) => name),
);
let failures = 0;
const fail = (line) => {
  failures++;
  console.log(`  FAIL ${line}`);
};

/** The package a bare `import` could not find, from Node's ERR_MODULE_NOT_FOUND message. */
function missingPackage(error) {
  const m = /Cannot find package '([^']+)'/.exec(String(error?.message));
  return m ? m[1] : undefined;
}

for (const key of Object.keys(pkg.exports)) {
  const specifier = key === '.' ? pkg.name : `${pkg.name}${key.slice(1)}`;
  if (key.includes('*')) {
    console.log(`  skip ${specifier}: a pattern entry, no single module to import`);
    continue;
  }
  if (key.endsWith('.json')) {
    const json = require(specifier);
    if (json.name === pkg.name) console.log(`  ok   ${specifier} (JSON)`);
    else fail(`${specifier}: unexpected JSON`);
    continue;
  }
  try {
    const mod = await import(specifier);
    const names = Object.keys(mod);
    if (names.length === 0) fail(`${specifier}: imports but exports nothing`);
    else console.log(`  ok   ${specifier} (${names.length} exports)`);
  } catch (error) {
    // An adapter entry wraps Node's error in one that names the package to install; the
    // original stays in `cause`.
    const root = error?.code === 'ERR_MODULE_NOT_FOUND' ? error : error?.cause;
    const missing = missingPackage(root);
    const peer = missing && [...optionalPeers].find((p) => missing === p || missing.startsWith(`${p}/`));
    if (root?.code === 'ERR_MODULE_NOT_FOUND' && peer)
      console.log(`  skip ${specifier}: needs the optional peer dependency '${peer}', not installed here`);
    else fail(`${specifier}: ${error?.code ?? ''} ${String(error?.message).split('\n')[0]}`);
  }
}

// A small projection of a bundled session: tool-result clearing must shrink it.
const sessionFile = process.argv[2];
const { readSessionFile } = await import(`${pkg.name}/unstable/formats`);
const { createEstimator } = await import(pkg.name);
const { projectRequest } = await import(`${pkg.name}/unstable/projection`);
const [session] = readSessionFile(sessionFile).sessions;
const projected = projectRequest(session.messages, {
  limits: { capacity: 64_000, trigger: 20_000 },
  // VT Code's clearing (the default preset keeps tool results until compaction).
  policy: { preset: 'vtcode' },
  estimator: createEstimator(),
});
const d = projected.diagnostics;
const line = `projection of ${session.messages.length} messages: ${d.originalTokens} → ${d.projectedTokens} tokens, ${d.clearedResults} tool results cleared`;
if (d.clearedResults > 0 && d.projectedTokens < d.originalTokens) console.log(`  ok   ${line}`);
else fail(line);

console.log(
  `  node ${process.version}: ${failures === 0 ? 'all imports and the projection work' : `${failures} failure(s)`}`,
);
process.exitCode = failures === 0 ? 0 : 1;
