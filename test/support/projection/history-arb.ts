import fc from 'fast-check';
import { msg, type Message } from '#src/messages/message.js';
import { body, call, deepFreeze } from './helpers.js';

const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', '');
const sizeArb = fc.oneof(fc.constant(2), fc.integer({ min: 200, max: 3_000 }));

/** Random histories, broken pairing included: reused/empty/unknown ids, early, duplicate and missing results. */
export const historyArb: fc.Arbitrary<Message[]> = fc
  .array(
    fc.oneof(
      fc.record({ k: fc.constant('user' as const), n: sizeArb }),
      fc.record({ k: fc.constant('system' as const) }),
      fc.record({
        k: fc.constant('calls' as const),
        ids: fc.array(idArb, { minLength: 1, maxLength: 3 }),
        bigArgs: fc.boolean(),
        sig: fc.boolean(),
      }),
      fc.record({ k: fc.constant('result' as const), id: fc.oneof(idArb, fc.constant('zz')), n: sizeArb }),
      fc.record({ k: fc.constant('results' as const), n: sizeArb }),
    ),
    { maxLength: 40 },
  )
  .map((ops) => {
    const out: Message[] = [];
    let open: string[] = [];
    for (const op of ops) {
      if (op.k === 'user') out.push(msg.user(body(op.n, 'u')));
      else if (op.k === 'system') out.push(msg.system('reminder'));
      else if (op.k === 'calls') {
        const args = op.bigArgs ? `"${'a'.repeat(1_500)}"` : '{}';
        out.push(
          msg.assistant(
            '',
            op.ids.map((id) => call(id, 'tool_x', args, op.sig ? { thoughtSignature: 'sig' } : {})),
          ),
        );
        open = op.ids;
      } else if (op.k === 'result') out.push(msg.tool(op.id, body(op.n)));
      else for (const id of open.slice().reverse()) out.push(msg.tool(id, body(op.n), 'tool_x')); // reordered completions
    }
    return deepFreeze(out);
  });
