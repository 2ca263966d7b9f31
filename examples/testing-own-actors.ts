/**
 * Testing your own actors against every path of a machine (offline: no network, no API key).
 *
 *   npx tsx examples/testing-own-actors.ts
 *
 * `mySummarizer` is the kind of code an adopter writes: it sends the summary request to their
 * provider and turns the HTTP answer into what the capacity-retry ladder expects (a summary,
 * or a thrown `{ kind: 'capacity' | 'provider', … }`). `scriptedProvider` stands in for the
 * provider in tests: for each call it answers what the path needs. Every path of the ladder
 * then runs through the real machine with the real summarizer; in Jest or Vitest that is
 *
 *   it.each(capacityRetryPaths().map((p) => [p.name, p]))('%s', (_name, path) =>
 *     runPath(path, { actors: { requestSummary: mySummarizer(scriptedProvider) } }));
 */
import { capacityRetryPaths, runPath, type OwnActor, type Reply } from 'context-compactor/testing';

/** What a chat-completions style provider answers. */
interface HttpAnswer {
  status: number;
  body: any;
}

/** Sends one summary request; `expected` is only there for a test's stand-in provider. */
export type Post = (request: { budget: number | null }, expected: Reply | undefined) => Promise<HttpAnswer>;

/** Your summarizer: the provider's answer in the shape the ladder expects. */
export function mySummarizer(post: Post): OwnActor {
  return async (input, { expected }) => {
    const request = input as { turnId: string; attempt: number; budget: number | null };
    const answer = await post({ budget: request.budget }, expected);
    const error = answer.body?.error;
    if (answer.status === 400 && error?.code === 'context_length_exceeded')
      throw { kind: 'capacity', inputTokens: error.input_tokens, message: error.message };
    if (answer.status !== 200)
      throw { kind: 'provider', message: `HTTP ${answer.status}: ${error?.message}` };
    const text: string = answer.body.choices[0].message.content ?? '';
    return {
      summaryRef: `${request.turnId}:summary:${request.attempt}`,
      summaryTokens: answer.body.usage.completion_tokens,
      inputTokens: answer.body.usage.prompt_tokens,
      finishReason: answer.body.choices[0].finish_reason,
      followsTemplate: text.includes('## Goal'),
      empty: text.trim() === '',
    };
  };
}

/** A stand-in provider for tests: answers each call the way the path needs it answered. */
export const scriptedProvider: Post = async (_request, expected) => {
  if (expected === undefined) return { status: 500, body: { error: { message: 'no answer scripted' } } };
  if ('error' in expected) {
    const e = expected.error as { kind: string; inputTokens?: number; message: string };
    return e.kind === 'capacity'
      ? {
          status: 400,
          body: {
            error: { code: 'context_length_exceeded', message: e.message, input_tokens: e.inputTokens },
          },
        }
      : { status: 500, body: { error: { message: e.message } } };
  }
  const s = expected.done as {
    empty: boolean;
    followsTemplate: boolean;
    finishReason: string;
    inputTokens: number;
    summaryTokens: number;
  };
  return {
    status: 200,
    body: {
      choices: [
        {
          message: {
            content: s.empty
              ? ''
              : s.followsTemplate
                ? '## Goal\nFix the failing test.'
                : 'Fix the failing test.',
          },
          finish_reason: s.finishReason,
        },
      ],
      usage: { prompt_tokens: s.inputTokens, completion_tokens: s.summaryTokens },
    },
  };
};

/** Runs every capacity-retry path with your summarizer; returns how many passed. */
export async function checkEveryPath(): Promise<number> {
  for (const path of capacityRetryPaths())
    await runPath(path, { actors: { requestSummary: mySummarizer(scriptedProvider) } });
  return capacityRetryPaths().length;
}

if (
  process.argv[1]?.endsWith('testing-own-actors.js') ||
  process.argv[1]?.endsWith('testing-own-actors.ts')
) {
  const passed = await checkEveryPath();
  console.log(`all ${passed} capacity-retry paths passed with mySummarizer`);
}
