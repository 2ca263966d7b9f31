import { describe, expect, it } from '@jest/globals';
import { topLevelValueText, withTopLevelValueOf } from '#src/serve/json-splice.js';

describe('a top-level value of a request text, as its bytes', () => {
  const client =
    '{"model":"m","tools":[{"name":"Read","description":"reads \\"tools\\": [] \\u2014 a file"}],"messages":[]}';

  it('reads the value under a top-level key as written (escapes and spacing kept), not a nested key of that name', () => {
    expect(topLevelValueText(client, 'tools')).toBe(
      '[{"name":"Read","description":"reads \\"tools\\": [] \\u2014 a file"}]',
    );
    expect(topLevelValueText('{"a":{"tools":[1]}, "tools" : [ 2 ] }', 'tools')).toBe('[ 2 ]');
    expect(topLevelValueText('{"a":{"tools":[1]}}', 'tools')).toBeUndefined();
  });

  it("puts the client's bytes of a value into a body written anew, every other byte of that body kept", () => {
    const rewritten = `{\n  "model": "m",\n  "tools": [\n    {\n      "name": "Read",\n      "description": "reads \\"tools\\": [] — a file"\n    }\n  ],\n  "messages": [1]\n}\n`;
    const out = withTopLevelValueOf(rewritten, client, 'tools');
    expect(out).toBe(
      `{\n  "model": "m",\n  "tools": [{"name":"Read","description":"reads \\"tools\\": [] \\u2014 a file"}],\n  "messages": [1]\n}\n`,
    );
    expect(JSON.parse(out)).toEqual(JSON.parse(rewritten));
    // Where either lacks the key, the body stays as it is.
    expect(withTopLevelValueOf(rewritten, '{"model":"m"}', 'tools')).toBe(rewritten);
    expect(withTopLevelValueOf('{"model":"m"}', client, 'tools')).toBe('{"model":"m"}');
  });
});
