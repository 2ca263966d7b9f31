import { afterAll } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg, type Message } from '#src/messages/message.js';
import { summarySections } from '#src/summary/index.js';
import type { ToolSchema } from '#src/providers/types.js';

const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });

/**
 * A small agent session: a system prompt, two user turns with read / shell / write batches
 * (one parallel), each result `size` characters. README.md is read, app.py written.
 */
export function agentSession(size = 2_000): Message[] {
  const body = (tag: string) => `${tag} `.repeat(Math.ceil(size / (tag.length + 1)));
  return [
    msg.system('SYSTEM: you are a coding agent; follow AGENTS.md.'),
    msg.user('Fix the failing test in app.py. Do not touch setup.cfg.'),
    msg.assistant('', [call('c1', 'read_file', { path: 'README.md' })]),
    msg.tool('c1', `# README\n${body('readme')}`, 'read_file'),
    msg.assistant('', [
      call('c2', 'bash', { command: 'pytest -q tests/test_app.py' }),
      call('c3', 'bash', { command: 'git status' }),
    ]),
    msg.tool(
      'c2',
      `FAILED tests/test_app.py::test_add - assert 3 == 4\n${body('trace')}\nexit code: 1`,
      'bash',
    ),
    msg.tool('c3', `On branch main\n${body('status')}`, 'bash'),
    msg.assistant('The add function is off by one.'),
    msg.user('Go ahead and fix it.'),
    msg.assistant('', [
      call('c4', 'write_file', { path: 'app.py', content: 'def add(a, b):\n    return a + b\n' }),
    ]),
    msg.tool('c4', 'ok', 'write_file'),
    msg.assistant('', [call('c5', 'bash', { command: 'pytest -q' })]),
    msg.tool('c5', `4 passed\n${body('pass')}\nexit code: 0`, 'bash'),
    msg.assistant('All tests pass now.'),
  ];
}

/** A summary that follows the summary template (every section, one line each). */
export function templateSummary(): string {
  return summarySections()
    .map((s) => `## ${s}\n- ${s.toLowerCase()}: pytest -q exited 0 after fixing add() in app.py`)
    .join('\n');
}

/** A frozen parent tool catalog (summaries reuse it when provider and model match). */
export const TOOLS: ToolSchema[] = [
  {
    name: 'bash',
    description: 'Run a shell command',
    parameters: { type: 'object', properties: { command: { type: 'string' } } },
  },
  {
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
];
export const SYSTEM = 'SYSTEM: you are a coding agent; follow AGENTS.md.';

/** A maker of fresh session directories (not yet created), removed after the file's tests. */
export function sessionDirs(): () => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return () => {
    const d = mkdtempSync(join(tmpdir(), 'compactor-session-'));
    dirs.push(d);
    return join(d, 'session');
  };
}

/** `n` exchanges (a user note and a read_file batch), about 450 tokens each, numbered from `from`. */
export function readExchanges(from: number, n: number): Message[] {
  const out: Message[] = [];
  for (let i = from; i < from + n; i++) {
    out.push(msg.user(`Step ${i}: ${'check the parser module and report. '.repeat(8)}`));
    out.push(msg.assistant('', [call(`c${i}`, 'read_file', { path: `src/m${i}.ts` })]));
    out.push(
      msg.tool(`c${i}`, `export const v${i} = ${i};\n${'// a line of source\n'.repeat(60)}`, 'read_file'),
    );
  }
  return out;
}
