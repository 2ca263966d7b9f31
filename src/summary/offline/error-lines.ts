import { oneLine } from '../../core/text.js';
import { unique } from './shell.js';

/** Error lines of tool output: what an agent quotes back when it fixes something. */

const EXCEPTION_LINE = /^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b:?.*)$/;
const ERROR_LINE =
  /^\s*(?:(?:error|fatal|panic|FAILED|FAIL|ERROR|E\s{2,})\b.*|.*\berror(?: TS\d+)?:.*|.*: command not found.*|.*No such file or directory.*|.*<tool_use_error>.*)$/;
// In output that did not fail, only lines a test runner or compiler prints for a failure count.
const REPORTED_FAILURE = /^\s*(?:FAILED|FAIL|ERROR)\b\s+\S|^\s*(?:[\w.]*(?:Error|Exception)):\s+\S/;

const MAX_LINES = 8;

function cleaned(lines: string[]): string[] {
  return unique(
    lines.map((l) => oneLine(l.replace(/<\/?tool_use_error>/g, ''), 240)).filter((l) => l !== ''),
  );
}

/** The final exception line of the Python traceback starting at `i`, and where it ends. */
function tracebackEnd(lines: readonly string[], i: number): { line?: string; next: number } {
  let j = i + 1;
  while (j < lines.length && (/^\s/.test(lines[j]) || lines[j].trim() === '')) j++;
  return { ...(j < lines.length && EXCEPTION_LINE.test(lines[j]) ? { line: lines[j].trim() } : {}), next: j };
}

/**
 * Error lines of a tool output: the final exception line of each Python traceback
 * anywhere, plus (for failed results) lines that look like compiler, test or shell errors,
 * and (for the rest) the failure lines a test runner reports.
 */
export function errorLines(text: string, failed: boolean): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && out.length < MAX_LINES; i++) {
    if (lines[i].startsWith('Traceback (most recent call last)')) {
      const tb = tracebackEnd(lines, i);
      if (tb.line !== undefined) out.push(tb.line);
      i = tb.next;
      continue;
    }
    const line = lines[i];
    if (failed ? ERROR_LINE.test(line) || EXCEPTION_LINE.test(line) : REPORTED_FAILURE.test(line))
      out.push(line.trim());
  }
  return cleaned(out);
}

/** The first non-empty line of an output (what a failure said when no error line stands out). */
export function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '(no output)';
  return oneLine(line.replace(/<\/?tool_use_error>/g, ''), 240);
}
