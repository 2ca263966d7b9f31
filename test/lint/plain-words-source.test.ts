import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// Every string in src/ may reach a user (help, a report, an error, a log line), and every string
// in machines/ (a state's or transition's description) is shown by the diagrams and the inspector.
// A rule id of the behaviour rules (a capital letter and a number) or a section sign pointing into
// a document outside the repository standing in one is a word the user cannot look up.
// Comments are kept free of rule ids by the lint rule local/plain-comments (plain-comments.test.ts).
const RULE_ID = /\b[A-Z]\d{1,2}\b|§\s?\d/;
const SRC = join(process.cwd(), 'src');
const MACHINES = join(process.cwd(), 'machines');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every string and template text of a source that names a rule id, as "name:line: text". */
function idsInStrings(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const isText =
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node);
    if (isText && RULE_ID.test(node.text)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(`${name}:${line}: ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('plain words in the source', () => {
  it('no string in src/ names a rule id (comments are checked by the lint rule)', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => idsInStrings(relative(process.cwd(), f), readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('no string in machines/ (descriptions included) names a rule id or a document section', () => {
    const files = sourceFiles(MACHINES);
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((f) => idsInStrings(relative(process.cwd(), f), readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check finds an id in a string or template, never in a comment', () => {
    const probe = [
      '// trigger reached (C1)',
      "const a = 'below trigger (C1)';",
      'const b = `kept ${n} batch(es) (C2)`;',
      "const c = 'no id here, H2O and 3D aside';",
      "const d = { description: 'validate the summary (§14)' };",
    ].join('\n');
    expect(idsInStrings('probe.ts', probe)).toEqual([
      'probe.ts:2: below trigger (C1)',
      'probe.ts:3:  batch(es) (C2)',
      'probe.ts:5: validate the summary (§14)',
    ]);
  });
});
