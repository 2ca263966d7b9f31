import type { Json } from '../../messages/message.js';
import { oneLine } from '../../core/text.js';

/** Todo items of a plan tool (Claude Code TodoWrite, Codex update_plan), as `[status] text`. */
export function planItems(args: Record<string, Json>): string[] {
  const list = args.todos ?? args.plan ?? args.items;
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const t of list) {
    if (!t || typeof t !== 'object' || Array.isArray(t)) continue;
    const content = t.content ?? t.step ?? t.title;
    if (typeof content !== 'string') continue;
    out.push(`[${typeof t.status === 'string' ? t.status : 'pending'}] ${oneLine(content, 200)}`);
  }
  return out;
}

/** Files named by aider SEARCH/REPLACE blocks or "Applied edit to" lines. */
export function aiderEdits(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^([^\s`<>=][^\n`]*?)\n```[^\n]*\n<<<<<<< SEARCH/gm)) out.push(m[1].trim());
  for (const m of text.matchAll(/^Applied edit to (.+)$/gm)) out.push(m[1].trim());
  return out;
}
