import { createHash, type Hash } from 'node:crypto';
import type { SentRequest } from '../../../machines/index.js';
import type { Message } from '../../messages/message.js';
import { clearedCallIds } from '../../projection/index.js';

// A message's wire identity: policies that rebuild an unchanged message as a new object still
// send the same bytes, so the cache still hits. Kept per message object, so each is printed once.
const prints = new WeakMap<Message, string>();
function printOf(m: Message): string {
  let p = prints.get(m);
  if (p === undefined) prints.set(m, (p = createHash('sha1').update(JSON.stringify(m)).digest('base64')));
  return p;
}

// What each print was made of: its messages and the hash before its digest. The next turn's
// request usually begins with the same message objects, so only the messages after them are
// hashed and looked at again (else each request costs its whole history).
const made = new WeakMap<SentRequest, { messages: readonly Message[]; hash: Hash }>();

/** Whether `request` begins with the very message objects of `prefix`. */
function beginsWith(request: readonly Message[], prefix: readonly Message[]): boolean {
  if (prefix.length > request.length) return false;
  for (let i = 0; i < prefix.length; i++) if (request[i] !== prefix[i]) return false;
  return true;
}

/**
 * The print of `request` the turn keeps as its last request sent, and whether `request`
 * extends `previous` unchanged (its first `previous.count` messages print the same), which is
 * when the provider's prompt cache still holds its whole prefix.
 */
export function printRequest(
  request: readonly Message[],
  previous: SentRequest | null = null,
): { sent: SentRequest; prefixIntact: boolean } {
  const before = previous === null ? undefined : made.get(previous);
  // The same objects print the same, so the prefix is intact and its hash is the one kept.
  if (before !== undefined && beginsWith(request, before.messages)) {
    const cleared = new Set(previous!.clearedCallIds);
    for (const id of clearedCallIds(request.slice(before.messages.length))) cleared.add(id);
    return { sent: finish(request, before.hash.copy(), before.messages.length, cleared), prefixIntact: true };
  }
  const hash = createHash('sha1');
  const at = previous !== null && previous.count <= request.length ? previous.count : -1;
  let prefixIntact = false;
  for (let i = 0; i <= request.length; i++) {
    if (i === at) prefixIntact = hash.copy().digest('base64') === previous!.print;
    if (i < request.length) hash.update(printOf(request[i]));
  }
  return { sent: finish(request, hash, request.length, clearedCallIds(request)), prefixIntact };
}

/** The print of `request` from `hash`, which holds its first `from` messages; kept with what it was made of. */
function finish(
  request: readonly Message[],
  hash: Hash,
  from: number,
  cleared: ReadonlySet<string>,
): SentRequest {
  for (let i = from; i < request.length; i++) hash.update(printOf(request[i]));
  const kept = hash.copy();
  const sent = { count: request.length, print: hash.digest('base64'), clearedCallIds: [...cleared] };
  made.set(sent, { messages: request, hash: kept });
  return sent;
}
