import { writeFileSync } from 'node:fs';
import { exportSession } from '../../src/formats/export-session.js';
import { msg, type Message } from '../../src/messages/message.js';
import { syntheticSession } from './synthetic-session.js';

/** Writes a synthetic session of `count` messages as an OpenAI chat document. */
export function writeLongSession(path: string, count: number): void {
  writeFileSync(path, exportSession(syntheticSession(count), 'openai-chat'));
}

/**
 * Code-like text of about `bytes` bytes (lines of a log), built by repeating a varied
 * block so generation stays cheap; the numbers make lines differ.
 */
function bigToolText(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `src/module${i % 977}.ts:${i}:  const value${i % 131} = compute(${(i * 7919) % 10007}, "item-${i}");`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** Writes a short session whose one tool result is about `bytes` bytes (OpenAI chat document). */
export function writeBigToolResult(path: string, bytes: number): void {
  const messages: Message[] = [
    msg.system('You are a coding agent. Use tools to inspect and change the repository.'),
    msg.user('Find why the build log is so long.'),
    msg.assistant('', [{ id: 'call_1', name: 'run_build', arguments: '{"verbose":true}' }]),
    msg.tool('call_1', bigToolText(bytes), 'run_build'),
    msg.assistant('The log repeats one warning per module.'),
    msg.user('Thanks. Summarize what to fix first.'),
  ];
  writeFileSync(path, exportSession(messages, 'openai-chat'));
}

// `scale-files.ts long PATH COUNT` or `scale-files.ts big PATH BYTES` writes one file.
if (process.argv[1] && /scale-files\.ts$/.test(process.argv[1])) {
  const [kind, path, n] = process.argv.slice(2);
  if (kind === 'long') writeLongSession(path, Number(n));
  else if (kind === 'big') writeBigToolResult(path, Number(n));
  else throw new Error('usage: scale-files.ts long|big PATH N');
}
