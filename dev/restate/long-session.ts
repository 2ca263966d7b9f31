import type { ObjectTurnResult } from '../../src/restate/index.js';
import { agentSteps } from './sessions.js';

/** Calls one handler of one session object over the ingress (as `RestateServer.call`). */
export type SessionCall = <T>(key: string, handler: string, body?: unknown) => Promise<T>;

/**
 * Grows session `key` by `compactions` rounds of `steps` tool steps, each round appended and
 * followed by a turn that compacts it: a session that has run for hours, for the tests and the
 * benchmark. Answers the boundary ids in order; a round that does not compact fails. Rounds
 * are numbered from `from`, so a session can be grown further by a later call.
 */
export async function growLongSession(
  call: SessionCall,
  key: string,
  compactions: number,
  steps = 30,
  size = 2_000,
  from = 0,
): Promise<string[]> {
  const boundaries: string[] = [];
  for (let round = from; round < from + compactions; round++) {
    await call(key, 'append', { messages: agentSteps(`${key}-r${round}`, steps, size) });
    const turn = await call<ObjectTurnResult>(key, 'runTurn');
    if (turn.decision !== 'compacted' || !turn.boundary)
      throw new Error(`${key}: round ${round} did not compact (${turn.decision})`);
    boundaries.push(turn.boundary.id);
  }
  return boundaries;
}
