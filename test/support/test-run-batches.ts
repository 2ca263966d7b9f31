import { msg, type Message } from '#src/messages/message.js';

/**
 * A follow-up request on the bundled django session answered by `batches` test runs, one tool
 * batch each (every 7th fails): about 130 tokens a batch, so 60 of them refill a 32k window.
 */
export function testRunBatches(batches: number): Message[] {
  const out: Message[] = [
    msg.user(
      'Now also document violation_error_code in docs/ref/models/constraints.txt and rerun the tests.',
    ),
  ];
  for (let i = 0; i < batches; i++) {
    const command = `python -m pytest tests/constraints -k case${i}`;
    out.push(
      msg.assistant('THOUGHT: next case', [
        { id: `f${i}`, name: 'bash', arguments: JSON.stringify({ command }) },
      ]),
    );
    out.push(
      msg.tool(
        `f${i}`,
        `collected ${i} items\n${`output for case ${i} `.repeat(40)}\nexit code: ${i % 7 === 0 ? 1 : 0}`,
        'bash',
      ),
    );
  }
  return out;
}
