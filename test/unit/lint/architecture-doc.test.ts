import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

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
});
