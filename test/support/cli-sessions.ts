/**
 * Shared by the `compactor run` / `compactor compact` tests: an in-process CLI call with
 * captured streams, a synthetic agent session written as a canonical file, and a summary
 * text that follows the summary template (fake providers return it, so summary validation passes).
 */
import { afterAll, beforeAll } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg, type Message } from '#src/messages/message.js';
import { summarySections } from '#src/summary/index.js';
import type { FakeServer } from './fake-http.js';
import { startFakeOpenAI } from './fake-openai.js';

/** In-process CLI call with captured streams (see test/support/cli.ts). */
export { runCli as cli } from './cli.js';

/** A fresh working directory; with `chars`, its config selects the deterministic chars estimator. */
export function workDir(prefix: string, config: Record<string, unknown> = { encoding: 'chars' }): string {
  const dir = mkdtempSync(join(tmpdir(), `compactor-${prefix}-`));
  writeFileSync(join(dir, 'compactor.config.json'), JSON.stringify(config));
  return dir;
}

/**
 * An agent session: a user task, then `batches` sequential tool calls (`cat src/file-i.ts`)
 * with `resultChars`-sized results and assistant reasoning text between them; with
 * `userEvery`, follow-up user messages split it into several protocol groups.
 */
export function agentSession(
  batches = 30,
  resultChars = 1_600,
  assistantChars = 900,
  /** Insert a follow-up user message every this many batches (0 = one user task only). */
  userEvery = 0,
): Message[] {
  const messages: Message[] = [
    msg.system('You are a coding agent. Use the bash tool.'),
    msg.user("Fix the failing test in src/app.ts. Don't touch package.json."),
  ];
  for (let i = 0; i < batches; i++) {
    const id = `call_${i}`;
    if (userEvery > 0 && i > 0 && i % userEvery === 0) messages.push(msg.user(`Continue with file ${i}.`));
    const thought = `Step ${i}: reading src/file-${i}.ts to find where the parser breaks. `.repeat(
      Math.ceil(assistantChars / 70),
    );
    messages.push(
      msg.assistant(thought.slice(0, assistantChars), [
        { id, name: 'bash', arguments: JSON.stringify({ command: `cat src/file-${i}.ts` }) },
      ]),
      msg.tool(
        id,
        `export const value${i} = ${i};\n`.repeat(Math.ceil(resultChars / 28)).slice(0, resultChars),
        'bash',
      ),
    );
  }
  return messages;
}

/** Writes `messages` as a canonical session file in `dir`; returns its path. */
export function canonicalFile(dir: string, name: string, messages: Message[]): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({ format: 'compactor.canonical', version: 1, id: 'agent', messages }, null, 1),
  );
  return path;
}

/** A summary in the summary template (every heading, short bullets): what fake providers return. */
export function templateSummary(): string {
  return summarySections()
    .map((h) => `${h}\n- ${h.includes('Goal') ? 'Fix the failing test in src/app.ts' : '(none)'}`)
    .join('\n');
}

/** Every file under `dir` (recursively) with its text. */
export function filesUnder(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push({ path: p, text: readFileSync(p, 'utf8') });
  }
  return out;
}

/**
 * A working directory holding `session.json` (an agent session with follow-up users) and a
 * fake OpenAI-family server on 127.0.0.1 answering in the template, for the suite's lifetime.
 */
export function fakeOpenAIWorkspace(prefix: string): { dir: string; srv: () => FakeServer } {
  const dir = workDir(prefix);
  canonicalFile(dir, 'session.json', agentSession(30, 1_600, 900, 3));
  let srv: FakeServer | undefined;
  beforeAll(async () => {
    srv = await startFakeOpenAI({ window: 8_000, summaryText: templateSummary() });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, srv: () => srv! };
}
