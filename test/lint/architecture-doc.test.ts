import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import ts from 'typescript';

// docs/architecture.md is where a newcomer looks a rule id up: every file it names must exist
// and the layer picture must show every folder of src/, or the page sends people astray.
const ROOT = process.cwd();
const DOC = 'docs/architecture.md';
const text = readFileSync(join(ROOT, DOC), 'utf8');

/**
 * The repository paths a markdown line names in backticks. A bare file name (`estimator.ts`)
 * continues the folder of the full path before it on the same line, as the tables write it;
 * `src/summary/*` stands for the folder.
 */
function pathsOnLine(line: string): string[] {
  const paths: string[] = [];
  let folder: string | undefined;
  for (const [, token] of line.matchAll(/`([^`\s]+)`/g)) {
    if (/^(src|machines|dev|test|diagrams|docs)\//.test(token)) {
      const path = token.replace(/\/\*$/, '');
      paths.push(path);
      folder = token.endsWith('/*') || token.endsWith('/') ? path.replace(/\/$/, '') : posix.dirname(path);
    } else if (/^[\w.-]+\.(ts|js|md)$/.test(token)) {
      paths.push(folder === undefined ? token : `${folder}/${token}`);
    }
  }
  return paths;
}

// A rule id as test names cite it: an area letter and number (a trailing lowercase letter cites
// the same rule), or a section sign and number of the behaviour rules. A section sign right after a document's name points into
// that document, not at a rule, and is no id.
const RULE_ID =
  /\b(?:A[1-5]|B[1-4]|C(?:1[01]|[1-9])|D[1-3]|H[1-6]|L[1-8]|N[1-5]|O[1-3]|P1|R[12]|S[1-5]|T[1-3])(?=[a-z]?\b)|(?<![\w.-]+ )§\s?\d+/g;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The callee an `it(…)`, `it.each(…)(…)` or `describe.skip(…)` call names: `it`, `describe` … */
function testCallee(call: ts.CallExpression): string | undefined {
  let callee: ts.Expression = call.expression;
  if (ts.isCallExpression(callee)) callee = callee.expression;
  while (ts.isPropertyAccessExpression(callee)) callee = callee.expression;
  return ts.isIdentifier(callee) ? callee.text : undefined;
}

/**
 * The rule ids cited in the test names of one file: the titles of `it`, `test` and `describe`
 * calls, and the `name` of table rows (oracle and scenario tables become test names).
 */
function idsInTestNames(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const ids: string[] = [];
  const visit = (node: ts.Node): void => {
    let title: ts.Node | undefined;
    if (ts.isCallExpression(node) && ['it', 'test', 'describe'].includes(testCallee(node) ?? ''))
      title = node.arguments[0];
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text === 'name')
      title = node.initializer;
    if (title && (ts.isStringLiteralLike(title) || ts.isTemplateExpression(title)))
      for (const [id] of title.getText(source).matchAll(RULE_ID)) ids.push(id.replace(/\s/, ''));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return ids;
}

/** The ids the gloss table on this page explains, one row each. */
function glossedIds(): string[] {
  const table = text.slice(text.indexOf('## What each rule id means'));
  return [...table.matchAll(/^\| (§?[A-Z]?\d+|[A-Z]\d+) \| \S/gm)].map(([, id]) => id);
}

describe('docs/architecture.md is true for the tree', () => {
  it('every path it names in backticks exists', () => {
    const named = text.split('\n').flatMap(pathsOnLine);
    expect(named).toEqual(expect.arrayContaining(['src/session/route.ts', 'src/estimate/estimator.ts']));
    expect(named.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  it('every file it links to exists', () => {
    const links = [...text.matchAll(/\]\(([^)#]+)\)/g)].map(([, target]) => target);
    expect(links.length).toBeGreaterThanOrEqual(8);
    expect(links.filter((l) => !existsSync(join(ROOT, dirname(DOC), l)))).toEqual([]);
  });

  it('the layer picture shows every folder of src/', () => {
    const picture = text.slice(text.indexOf('## Layers'), text.indexOf('## The four machines'));
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `src/${e.name}`);
    expect(folders.filter((f) => !new RegExp(`${f}\\b`).test(picture))).toEqual([]);
  });

  it('the path reader follows the tables: bare names continue the folder before them', () => {
    expect(pathsOnLine('| T1 | x | `src/estimate/counters.ts`, `estimator.ts`, `npm run x` |')).toEqual([
      'src/estimate/counters.ts',
      'src/estimate/estimator.ts',
    ]);
    expect(pathsOnLine('| L | x | `src/summary/*` (`bound.ts`), `machines/capacity-retry/` |')).toEqual([
      'src/summary',
      'src/summary/bound.ts',
      'machines/capacity-retry/',
    ]);
  });
  it('every rule id a test name cites has its one-line gloss in the table', () => {
    const cited = new Set(
      testFiles(join(ROOT, 'test')).flatMap((f) => idsInTestNames(f, readFileSync(f, 'utf8'))),
    );
    expect(cited.size).toBeGreaterThan(50);
    const glossed = glossedIds();
    expect([...cited].filter((id) => !glossed.includes(id)).sort()).toEqual([]);
    expect(glossed.filter((id, i) => glossed.indexOf(id) !== i)).toEqual([]);
  });

  it('the id reader finds ids in test titles and table rows, not in comments or document pointers', () => {
    const probe = [
      "describe('budgets (B1–B4)', () => {",
      '  it(`C3b: ${n} batches`, () => {});',
      "  it.each([1])('§14: loop guard %s', () => {});",
      '  // H2: a comment is no test name',
      "  const rows = [{ name: 'L5: halves the budget' }, { label: 'T1: not a name' }];",
      "  it('SSE framing (wire-formats §7, peers.md §4)', () => {});",
      "  it('V8, UTF8 and P99 are words', () => {});",
      '});',
    ].join('\n');
    expect(idsInTestNames('probe.ts', probe)).toEqual(['B1', 'B4', 'C3', '§14', 'L5']);
    expect(glossedIds()).toEqual(expect.arrayContaining(['N1', 'C10', '§14']));
  });
});
