import { describe, expect, it } from '@jest/globals';
import { largeBody } from '#dev/bench/serve-blocking.js';
import { checkJsonDepthInSlices, parsedInSlices } from '#src/serve/sliced-parse.js';
import { parseRequest, writeRequest } from '#src/serve/protocols.js';

/**
 * A large body is checked and parsed a slice at a time: the event loop gets its turn between
 * slices (other clients' requests are served there), and the result is what parsing it whole
 * gives, number texts included.
 */

/** Counts the turns of the event loop until stopped. */
function turns() {
  let n = 0;
  let on = true;
  const tick = () => {
    n++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      on = false;
      return n;
    },
  };
}

describe('serve: a large body is read a slice at a time', () => {
  const text = largeBody(4 * 1024 * 1024);

  it('the parse lets the event loop run between slices and gives what JSON.parse gives', async () => {
    const loop = turns();
    const body = await parsedInSlices(Buffer.from(text));
    // 4 MiB in slices of 256 KiB: the loop turned at least once per slice.
    expect(loop.stop()).toBeGreaterThanOrEqual(16);
    expect(body).toEqual(JSON.parse(text));
  });

  it('the depth check lets the event loop run too, and still refuses a body nested too deep', async () => {
    const loop = turns();
    await checkJsonDepthInSlices(text);
    expect(loop.stop()).toBeGreaterThanOrEqual(16);
    const deep = `{"pad":"${'x'.repeat(600_000)}","v":${'['.repeat(600)}${']'.repeat(600)}}`;
    await expect(checkJsonDepthInSlices(deep)).rejects.toThrow(/nests deeper than 512 levels/);
  });

  it('D2: a request parsed in slices writes back its number texts exactly (1.0 stays 1.0)', async () => {
    const pad = 'y'.repeat(300_000);
    const request = `{"model":"gpt-4o","temperature":1.0,"messages":[{"role":"user","content":"${pad}"},{"role":"user","content":"ok","x":2.50}]}`;
    const body = await parsedInSlices(Buffer.from(request));
    const parsed = parseRequest('openai-chat', request, false, '/v1/chat/completions', body);
    const written = writeRequest(parsed, parsed.messages);
    expect(written).toContain('"temperature": 1.0');
    expect(written).toContain('"x": 2.50');
  });

  it('a body that is not one JSON document gives undefined (it is then parsed whole for its error)', async () => {
    expect(await parsedInSlices(Buffer.from('{"messages":[1,2'))).toBeUndefined();
    expect(await parsedInSlices(Buffer.from('{"a":1}{"b":2}'))).toBeUndefined();
  });
});
