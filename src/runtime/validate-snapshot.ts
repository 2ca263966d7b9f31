import type { AnyStateMachine, StateValue } from 'xstate';
import { UserError } from '../core/errors.js';

/** Dot paths of the active leaves and their ancestors in a state value ('working.syncing' → working, working.syncing). */
function activePaths(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.push(path);
    if (child !== undefined) out.push(...activePaths(child as StateValue, path));
  }
  return out;
}

/**
 * Checks that a persisted snapshot can be restored into `machine`: a known state value,
 * a context object, and — for an active snapshot — a persisted child for every actor the
 * active states invoke (without it the restored turn would wait forever). Throws a one-line
 * {@link UserError} naming `where`.
 */
export function validatePersistedSnapshot(machine: AnyStateMachine, snapshot: unknown, where: string): void {
  const s = snapshot as { status?: unknown; value?: unknown; context?: unknown; children?: unknown };
  if (s.status !== 'active' && s.status !== 'done')
    throw new UserError(`${where}: snapshot.status must be "active" or "done"`);
  if (typeof s.context !== 'object' || s.context === null)
    throw new UserError(`${where}: snapshot.context must be an object`);
  if (typeof s.value !== 'string' && (typeof s.value !== 'object' || s.value === null))
    throw new UserError(`${where}: snapshot.value must be a state value`);
  const children = (typeof s.children === 'object' && s.children !== null ? s.children : {}) as Record<
    string,
    unknown
  >;
  for (const path of activePaths(s.value as StateValue)) {
    let node;
    try {
      node = machine.getStateNodeById(`${machine.id}.${path}`);
    } catch {
      throw new UserError(`${where}: snapshot.value names an unknown state "${path}"`);
    }
    if (s.status !== 'active') continue;
    for (const inv of node.invoke)
      if (!(inv.id in children))
        throw new UserError(
          `${where}: snapshot is missing the in-flight actor "${inv.id}" of state "${path}"`,
        );
  }
}
