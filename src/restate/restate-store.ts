import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { parseOptions } from '../core/parse-options.js';
import { memoryStore, type MemoryStore } from '../store/index.js';
import { OBJECT_NAME } from './session-object.js';

/**
 * A session store kept in a Restate `compactorSession` object, for a session that runs in this
 * process: `createCompactorSession({ store: await restateStore({ ingress, key }) })`. Loading
 * and saving go over the ingress (plain HTTP: no SDK, any Node). The session works on a copy;
 * `save()` hands its committed records back, and is refused when another writer committed to
 * the object since this copy was loaded, so two writers never overwrite each other. Provider
 * calls of a session run here are not recorded steps: for turns that survive a dead worker,
 * call the object's own `runTurn`.
 */

/** Options of {@link restateStore}. */
export interface RestateStoreOptions {
  /** Ingress base URL, e.g. `http://localhost:8080`. */
  ingress: string;
  /** Session id (the object key). */
  key: string;
  /** Object name (default `compactorSession`). */
  object?: string;
}

/** A memory store loaded from the object, that saves back to it. */
export interface RestateStore extends MemoryStore {
  /** Hands the committed records back to the object; rejects when another writer committed first. */
  save(): Promise<void>;
}

const OptionsSchema = z.strictObject({
  ingress: z.url(),
  key: z.string().min(1),
  object: z.string().min(1).optional(),
});

/** Loads the session's records from the object (validated) as a store for `createCompactorSession`. */
export async function restateStore(options: RestateStoreOptions): Promise<RestateStore> {
  const {
    ingress,
    key,
    object = OBJECT_NAME,
  } = parseOptions(OptionsSchema, options, 'restateStore: options');
  const url = (handler: string) =>
    `${ingress.replace(/\/+$/, '')}/${encodeURIComponent(object)}/${encodeURIComponent(key)}/${handler}`;
  const call = async (handler: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(url(handler), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new UserError(`restateStore: ${url(handler)}: ${res.status} ${oneLine(text)}`);
    return JSON.parse(text) as unknown;
  };

  const store = memoryStore(await call('records'), `restateStore: ${url('records')}`);
  const count = ({ events, offset = 0 }: { events: unknown[]; offset?: number }) => offset + events.length;
  let basedOn = count(store.records());
  const saved = new Set(Object.keys(store.records().artifacts));
  const save = async () => {
    const { artifacts, ...records } = store.records();
    const added = Object.fromEntries(Object.entries(artifacts).filter(([id]) => !saved.has(id)));
    await call('commitRecords', { basedOn, ...records, artifacts: added });
    basedOn = count(records);
    for (const id of Object.keys(added)) saved.add(id);
  };
  return Object.assign(store, { save });
}

/** The server's answer on one line (its message when it is a JSON error). */
export function oneLine(text: string): string {
  try {
    const { message } = JSON.parse(text) as { message?: unknown };
    if (typeof message === 'string') return message.split('\n')[0]!;
  } catch {
    /* not JSON: the text itself */
  }
  return text.split('\n')[0]!.slice(0, 300);
}
