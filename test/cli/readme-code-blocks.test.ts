import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { runCli } from '#support/cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

// The README's code, as a user would copy it: every TypeScript block type-checks against the
// package (its emitted declarations, so `npm run build` first), the library and testing blocks
// run, and every shell line that needs no key or network runs with exit code 0.
const repoRoot = join(import.meta.dirname, '../..');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'compactor-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The fenced blocks of one language, in order. */
function blocks(lang: string): string[] {
  return [...readme.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1]);
}

/** Type errors of each block, compiled as its own module inside the repository (so the
 * package's own name resolves through its `exports`, as in a project that installed it). */
function typeErrors(sources: string[]): string[] {
  const files = new Map(sources.map((text, i) => [join(repoRoot, `readme-block-${i + 1}.ts`), text]));
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, ...rest) => {
    const text = files.get(f);
    return text === undefined
      ? getSourceFile.call(host, f, lang, ...rest)
      : ts.createSourceFile(f, text, lang);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && files.has(d.file.fileName))
    .map((d) => {
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      const block = d.file!.fileName.replace(/^.*readme-block-/, 'block ').replace(/\.ts$/, '');
      return `${block}, line ${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
}

/**
 * Runs blocks with tsx, one after another in one process, from a project that has the package
 * installed (a link to this one); each block's output, in order. One tsx start for all blocks:
 * each start is two Node processes and an esbuild service.
 */
async function runBlocks(sources: string[]): Promise<string[]> {
  const project = join(dir, 'project');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }');
  symlinkSync(repoRoot, join(project, 'node_modules', 'context-compactor'), 'dir');
  sources.forEach((source, i) => writeFileSync(join(project, `block-${i}.ts`), source));
  // Each block ends its output with a line of its own, so the outputs can be told apart.
  const mark = `--- block done ${Math.random().toString(36).slice(2)} ---`;
  const runner = sources
    .map((_, i) => `await import('./block-${i}.ts');\nconsole.log(${JSON.stringify(mark)});\n`)
    .join('');
  writeFileSync(join(project, 'run-blocks.ts'), runner);
  const tsx = join(repoRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [tsx, 'run-blocks.ts'], { cwd: project });
  const outputs = stdout.split(`${mark}\n`);
  expect(outputs.pop()).toBe('');
  return outputs;
}

// Commands that run until they are stopped (the proxy): the README shows them, the test does
// not start them, since they would never exit. A block that talks to Restate needs a Restate
// server and a worker, so none of its lines run either.
const RUNS_UNTIL_STOPPED = new Set(['serve']);
const NEEDS_RESTATE = /\brestate\b/i;

/** Every `compactor …` shell line of the README outside Restate blocks, as its arguments. */
function compactorCommands(): string[][] {
  return blocks('sh')
    .filter((b) => !NEEDS_RESTATE.test(b))
    .flatMap((b) => b.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .map((line) => line.split('&&').pop()!.trim().replace(/^npx /, ''))
    .filter((line) => line.startsWith('compactor '))
    .map((line) => line.split(/\s+/).slice(1));
}

/** The shell lines a user can run offline and that end: no provider, no key, no server. */
function offlineCommands(): string[][] {
  return compactorCommands().filter(
    (args) => !RUNS_UNTIL_STOPPED.has(args[0]) && !/--provider|\w+=/.test(args.join(' ')),
  );
}

describe("the README's code blocks", () => {
  const tsBlocks = blocks('ts');

  it('the README stays a page for users (at most 300 lines; details live in docs/)', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('every TypeScript block type-checks against the package, as written', () => {
    expect(tsBlocks.length).toBeGreaterThanOrEqual(5);
    expect(typeErrors(tsBlocks)).toEqual([]);
  });

  // The library and testing blocks run in one tsx process (see runBlocks); each test reads its own output.
  let ran: Promise<string[]> | undefined;
  const blockOutput = async (which: 0 | 1): Promise<string> => {
    ran ??= runBlocks([
      tsBlocks.find((b) => b.includes('createCompactorSession('))!,
      tsBlocks.find((b) => b.includes("from 'context-compactor/testing'"))!,
    ]);
    return (await ran)[which];
  };

  it('D1/H2: the library block runs offline and says what the session did', async () => {
    const out = await blockOutput(0);
    expect(out).toMatch(/^sending 2 messages, \d+ tokens$/m);
    expect(out).toMatch(/^below-threshold$/m);
    expect(out).toMatch(/^Nothing to compact: all 3 context items are recent enough/m);
  });

  it('the testing block drives every capacity-retry path with its own summarizer', async () => {
    expect(await blockOutput(1)).toMatch(/^\d{2,} paths passed$/m);
  });

  it('the serve line is shown but never started (it would not exit)', () => {
    expect(compactorCommands().map((c) => c[0])).toContain('serve');
    expect(offlineCommands().map((c) => c[0])).not.toContain('serve');
  });

  it('N1: every offline shell line runs as written (exit code 0), in order', async () => {
    const commands = offlineCommands();
    expect(commands.map((c) => c[0])).toEqual(
      expect.arrayContaining(['stats', 'plan', 'project', 'run', 'restore']),
    );
    mkdirSync(join(dir, 'cwd'), { recursive: true });
    for (const args of commands) {
      // Input paths are relative to the repository; a copy at the same place keeps the
      // repository free of the commands' output files.
      for (const a of args.filter((x) => x.startsWith('examples/'))) {
        mkdirSync(join(dir, 'cwd', dirname(a)), { recursive: true });
        copyFileSync(join(repoRoot, a), join(dir, 'cwd', a));
      }
      const r = await runCli(args, { cwd: join(dir, 'cwd') });
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: '' });
    }
  });

  it('D1: the quick start shows the report the main job prints (all but the elapsed time)', async () => {
    const shown = readme.match(/^```\n(examples\/sessions\/[^\n]+\n[\s\S]*?)^```/m)?.[1];
    const args = offlineCommands().find((c) => c[0] === 'run' && shown?.startsWith(c[1]!))!;
    mkdirSync(join(dir, 'report-cwd', dirname(args[1]!)), { recursive: true });
    copyFileSync(join(repoRoot, args[1]!), join(dir, 'report-cwd', args[1]!));
    const r = await runCli(args, { cwd: join(dir, 'report-cwd') });
    const withoutTime = (text: string) => text.replace(/^elapsed: .*$/m, 'elapsed: …');
    expect(withoutTime(r.out)).toBe(withoutTime(shown!));
  });

  it('N1: the project example clears old tool results (it names its preset) and writes the projection', async () => {
    const args = offlineCommands().find((c) => c[0] === 'project')!;
    // A change of the default preset cannot silently turn it into a run where nothing is cleared.
    expect(args).toContain('--preset');
    mkdirSync(join(dir, 'project-cwd', 'examples/sessions'), { recursive: true });
    copyFileSync(join(repoRoot, args[1]), join(dir, 'project-cwd', args[1]));
    const r = await runCli(args, { cwd: join(dir, 'project-cwd') });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/; reached, clearing ran$/m);
    expect(Number(/cleared: (\d+) result\(s\)/.exec(r.out)?.[1])).toBeGreaterThan(0);
    expect(r.out).not.toMatch(/\(0% smaller\)/);
    expect(existsSync(join(dir, 'project-cwd', args[args.indexOf('--out') + 1]))).toBe(true);
  });
});
