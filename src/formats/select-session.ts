import { UserError } from '../core/errors.js';
import type { ImportedSession, ImportResult } from './types.js';

/**
 * Picks one session: by id, or by 0-based index. Without a selector: the session with the
 * most messages, preferring main sessions over sidechains (`meta.sidechain === true`),
 * so a Claude Code transcript selects its main conversation even when a subagent ran longer.
 */
export function selectSession(result: ImportResult, selector?: string): ImportedSession {
  const all = result.sessions;
  const file = result.file ?? '<input>';
  if (all.length === 0) throw new UserError(`${file}: no sessions found`);
  if (selector === undefined || selector === '') {
    const main = all.filter((s) => s.meta.sidechain !== true);
    const pool = main.length > 0 ? main : all;
    return pool.reduce((best, s) => (s.messages.length > best.messages.length ? s : best), pool[0]);
  }
  const byId = all.find((s) => s.id === selector);
  if (byId) return byId;
  if (/^\d+$/.test(selector)) {
    const i = Number(selector);
    if (i < all.length) return all[i];
  }
  const ids = all.slice(0, 10).map((s, i) => `${i}:${s.id}`);
  throw new UserError(
    `${file}: no session '${selector}' (${all.length} sessions: ${ids.join(', ')}${all.length > 10 ? ', …' : ''})`,
  );
}
