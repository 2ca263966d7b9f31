import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: process.cwd() });

/**
 * Lints source text as if it sat at `filePath`, with the project's own eslint.config.js, and
 * returns the messages of one rule, in source order.
 */
export async function lintMessages(ruleId: string, filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result.messages.filter((m) => m.ruleId === ruleId).map((m) => m.message);
}
