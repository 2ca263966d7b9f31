import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import type { Message } from '../messages/message.js';
import { ArtifactSchema, type CompactBoundary } from './events.js';

/** File and directory names inside a session directory. */
export const EVENTS_FILE = 'events.jsonl';
export const ARTIFACTS_DIR = 'artifacts';
export const SNAPSHOTS_DIR = 'snapshots';

/** The full live history just before boundary `b`, read and checked from its artifact. */
export function readArtifact(dir: string, b: CompactBoundary): Message[] {
  const file = artifactFile(dir, b.id, b.artifact);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(`${file}: cannot read artifact (${(e as Error).message.split('\n')[0]})`);
  }
  const parsed = ArtifactSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`${file}: ${issue.path.map(String).join('.') || 'artifact'}: ${issue.message}`);
  }
  if (parsed.data.boundaryId !== b.id || parsed.data.messages.length !== b.before)
    throw new UserError(
      `${file}: artifact does not match boundary '${b.id}' (expected ${b.before} messages)`,
    );
  return parsed.data.messages;
}

/**
 * Where boundary `id`'s artifact is, refusing a recorded path that leads outside the
 * session directory (absolute, `..`, or a symbolic link): the log is input like any other.
 */
function artifactFile(dir: string, id: string, recorded: string): string {
  if (recorded !== `${ARTIFACTS_DIR}/${id}.json`)
    throw new UserError(
      `${join(dir, EVENTS_FILE)}: boundary '${id}' names artifact '${recorded}'; artifacts must be ${ARTIFACTS_DIR}/<boundary>.json inside the session directory`,
    );
  for (const p of [join(dir, ARTIFACTS_DIR), join(dir, recorded)]) {
    let link = false;
    try {
      link = lstatSync(p).isSymbolicLink();
    } catch {
      /* missing: reading reports it */
    }
    if (link)
      throw new UserError(
        `${p}: is a symbolic link; artifacts are read only from inside the session directory`,
      );
  }
  return join(dir, recorded);
}
