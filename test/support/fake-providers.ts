import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { closeAll, type DeclaredWindow, type FakeServer } from './fake-http.js';
import { startFakeAnthropic } from './fake-anthropic.js';
import { startFakeOpenAI } from './fake-openai.js';

/** A fake OpenAI and a fake Anthropic server shared by one test file. */
export interface FakeProviders {
  oai: FakeServer;
  ant: FakeServer;
}

/**
 * Starts both fake servers before the file's tests and closes them after (close() also fails
 * the file when a request exceeded a declared window). Read the servers inside tests only.
 * Scripted faults a test left unused are dropped after it, pass or fail: a hold meant for a
 * test that failed early would otherwise catch the next test's first request.
 */
export function useFakeProviders(opts: { window: DeclaredWindow; summaryText?: string }): FakeProviders {
  const fakes = {} as FakeProviders;
  beforeAll(async () => {
    fakes.oai = await startFakeOpenAI(opts);
    fakes.ant = await startFakeAnthropic(opts);
  });
  afterEach(() => {
    if (fakes.oai) fakes.oai.script.length = 0;
    if (fakes.ant) fakes.ant.script.length = 0;
  });
  afterAll(() => closeAll(fakes.oai, fakes.ant));
  return fakes;
}
