import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// Reads the emitted declarations (what a consumer's editor sees), so `npm run build` first
// (npm test does).
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${repoRoot}package.json`, 'utf8')) as {
  exports: Record<string, string | { types?: string }>;
};
const entries = Object.entries(pkg.exports).flatMap(([key, target]) =>
  typeof target === 'object' && target.types ? [{ key, file: `${repoRoot}${target.types.slice(2)}` }] : [],
);
const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  types: [],
  strict: true,
  noEmit: true,
};
// Only our own declarations are checked, so only relative imports (dist/ files) are followed:
// the frameworks' types (ai, langchain, the Agents SDK) would add ~1,200 files and ten times
// the time without changing a single finding (external symbols are never ours).
const host = ts.createCompilerHost(options);
host.resolveModuleNameLiterals = (literals, containing, _redirect, opts) =>
  literals.map((l) =>
    l.text.startsWith('.')
      ? ts.resolveModuleName(l.text, containing, opts, host)
      : { resolvedModule: undefined },
  );
const program = ts.createProgram(
  entries.map((e) => e.file),
  options,
  host,
);
const checker = program.getTypeChecker();
const resolve = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
const ours = (s: ts.Symbol) =>
  s.declarations?.[0]?.getSourceFile().fileName.startsWith(`${repoRoot}dist/`) ?? false;

/** Every export of every entry: the public name and the symbol it stands for. */
const publicApi = entries.flatMap(({ key, file }) => {
  const source = program.getSourceFile(file);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`${file}: missing; run npm run build`);
  return checker.getExportsOfModule(module).map((s) => ({ entry: key, name: s.name, symbol: resolve(s) }));
});
const exported = new Set(publicApi.map((e) => e.symbol));

/** Our declarations that a public declaration names (types, `typeof` queries, heritage) but no entry exports. */
function unexportedReferences(symbol: ts.Symbol): string[] {
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    const name = ts.isTypeReferenceNode(node)
      ? node.typeName
      : ts.isTypeQueryNode(node)
        ? node.exprName
        : ts.isExpressionWithTypeArguments(node)
          ? node.expression
          : undefined;
    const target = name && checker.getSymbolAtLocation(name);
    if (target && !(target.flags & ts.SymbolFlags.TypeParameter)) {
      const r = resolve(target);
      if (ours(r) && !exported.has(r)) found.add(r.name);
    }
    ts.forEachChild(node, visit);
  };
  for (const d of symbol.declarations ?? []) visit(d);
  return [...found];
}

/** The entries users build on: kept compatible within a major version. */
const STABLE = ['.', './ai-sdk', './langchain', './openai-agents', './serve', './restate', './testing'];
/** The building blocks: may change in any release, and say so in their name. */
const UNSTABLE = [
  './unstable/projection',
  './unstable/providers',
  './unstable/store',
  './unstable/formats',
  './unstable/machines',
];
const ADAPTERS = ['./ai-sdk', './langchain', './openai-agents'];
/** The most names each entry may export; raising one is a decision, not a side effect. */
const CAPS: Record<string, number> = {
  '.': 48,
  './ai-sdk': 11,
  './langchain': 10,
  './openai-agents': 11,
  './serve': 6,
  './restate': 16,
  './testing': 13,
  './unstable/projection': 34,
  './unstable/providers': 53,
  './unstable/store': 19,
  './unstable/formats': 21,
  './unstable/machines': 74,
};

describe('public API of the package entries (emitted declarations)', () => {
  it('has entries to check', () => {
    expect(entries.map((e) => e.key)).toEqual(expect.arrayContaining(['.', './unstable/machines']));
    expect(publicApi.length).toBeGreaterThan(50);
  });

  it('stable entries for users, the building blocks behind one unstable prefix', () => {
    expect(entries.map((e) => e.key)).toEqual([...STABLE, ...UNSTABLE]);
    expect(publicApi.map((e) => e.name)).toEqual(expect.arrayContaining(['createCompactorSession', 'msg']));
    // Report texts nowhere.
    const everywhere = publicApi.map((e) => e.name);
    for (const name of ['nothingToCompactLine', 'CACHE_NOTE', 'MAX_ROOT_CAUSE_CHARS', 'ProjectionFunctions'])
      expect(everywhere).not.toContain(name);
    // Actor implementation types stay inside: the machines' own types name them where needed.
    expect(everywhere.filter((n) => /Logic$/.test(n))).toEqual([]);
  });

  it('each entry stays within its cap of names', () => {
    const over = Object.entries(CAPS).flatMap(([entry, cap]) => {
      const count = publicApi.filter((e) => e.entry === entry).length;
      return count > cap ? [`${entry}: ${count} names, cap ${cap}`] : [];
    });
    expect(over).toEqual([]);
    expect(Object.keys(CAPS).sort()).toEqual(entries.map((e) => e.key).sort());
  });

  it('a name is exported from one entry only (the framework adapters share theirs: a user imports one)', () => {
    const owners = new Map<string, Set<string>>();
    for (const e of publicApi) owners.set(e.name, (owners.get(e.name) ?? new Set()).add(e.entry));
    const twice = [...owners]
      .filter(
        ([, keys]) =>
          [...keys].filter((k) => !ADAPTERS.includes(k)).length +
            (ADAPTERS.some((a) => keys.has(a)) ? 1 : 0) >
          1,
      )
      .map(([name, keys]) => `${name}: ${[...keys].join(', ')}`);
    expect(twice).toEqual([]);
  });

  it('every exported function, class, constant and type has a doc comment (shown on hover)', () => {
    const undocumented = publicApi
      .filter((e) => e.symbol.getDocumentationComment(checker).length === 0)
      .map((e) => `${e.entry}: ${e.name}`);
    expect(undocumented).toEqual([]);
  });

  it('no internal type leaks: every declaration of ours that a public one names is exported too', () => {
    const leaks = publicApi.flatMap((e) =>
      unexportedReferences(e.symbol).map(
        (r) => `${r} (named by ${e.entry}: ${e.name}; export it from that entry, with a doc comment)`,
      ),
    );
    expect([...new Set(leaks)].sort()).toEqual([]);
  });
});
