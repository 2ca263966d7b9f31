import { createHash } from 'node:crypto';
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

/**
 * The print of `request` the turn keeps as its last request sent, and whether `request`
 * extends `previous` unchanged (its first `previous.count` messages print the same), which is
 * when the provider's prompt cache still holds its whole prefix.
 */
export function printRequest(
  request: readonly Message[],
  previous: SentRequest | null = null,
): { sent: SentRequest; prefixIntact: boolean } {
  const hash = createHash('sha1');
  const at = previous !== null && previous.count <= request.length ? previous.count : -1;
  let prefixIntact = false;
  for (let i = 0; i <= request.length; i++) {
    if (i === at) prefixIntact = hash.copy().digest('base64') === previous!.print;
    if (i < request.length) hash.update(printOf(request[i]));
  }
  return {
    sent: {
      count: request.length,
      print: hash.digest('base64'),
      clearedCallIds: [...clearedCallIds(request)],
    },
    prefixIntact,
  };
}
