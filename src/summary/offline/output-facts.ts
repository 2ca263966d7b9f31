/**
 * Key facts of tool output that an agent is likely to use again after compaction: the
 * definition lines it read (function, class and test signatures, verbatim), the
 * identifiers it saw (camelCase or snake_case names), and the file paths the output named.
 * Error lines are not here: they have their own section (see error-lines.ts).
 */

/** The facts of one tool result, most useful first. */
export interface OutputFacts {
  definitions: string[];
  identifiers: string[];
  paths: string[];
}

/** One tool result's facts with where they came from, as the summary shows them. */
export interface SourceFacts {
  /** What produced the output: a path, a command or a tool call. */
  label: string;
  /** Message index of the result (recency). */
  last: number;
  /** Facts stated for this source, most useful first; each stated once per summary. */
  facts: string[];
}

// Declarations in most languages, after an optional line-number prefix (`cat -n`, editors).
const DEFINITION =
  /^(?:\d+[\t:|│ ]\s*)?(?:@\w+\s+)?(?:(?:export|default|pub(?:\(crate\))?|public|private|protected|static|async|abstract|final|override|declare)\s+)*(?:def|class|function\*?|interface|enum|struct|trait|impl|fn|func|type|module|describe|it|test)\b[\s(]/;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]{5,}/g;
const CAMEL = /[a-z0-9][A-Z]/;
const SNAKE = /[A-Za-z0-9]_[A-Za-z0-9]/;
const PATH = /\/?(?:[\w.-]+\/)+[\w-][\w.-]*\.[A-Za-z0-9]{1,8}\b/g;

const MAX_LINE = 160;
const MAX_DEFINITIONS = 12;
const MAX_IDENTIFIERS = 24;
const MAX_PATHS = 8;

/** True for a name worth keeping: long enough and shaped like code (inner capital or underscore). */
export function isCodeIdentifier(word: string): boolean {
  return CAMEL.test(word) || SNAKE.test(word);
}

/** Identifiers of a text with how often each occurs, in order of first occurrence. */
export function identifierCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of text.match(IDENTIFIER) ?? [])
    if (isCodeIdentifier(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
}

/**
 * Facts of one tool output. Identifiers are ordered by `weight` (how often the whole fork
 * shows them, by default this output alone), then by first occurrence; names already inside
 * a kept definition line are not repeated.
 */
export function outputFacts(text: string, weight?: ReadonlyMap<string, number>): OutputFacts {
  const definitions: string[] = [];
  for (const raw of text.split('\n')) {
    if (definitions.length >= MAX_DEFINITIONS) break;
    const line = raw.trim();
    if (line.length >= 8 && line.length <= MAX_LINE && DEFINITION.test(line) && !definitions.includes(line))
      definitions.push(line);
  }
  const local = identifierCounts(text);
  const order = [...local.keys()];
  const identifiers = order
    .filter((w) => !definitions.some((d) => d.includes(w)))
    .map((w, i) => ({ w, i, n: weight?.get(w) ?? local.get(w) ?? 0 }))
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .slice(0, MAX_IDENTIFIERS)
    .map((x) => x.w);
  const paths = [...new Set(text.match(PATH) ?? [])].slice(0, MAX_PATHS);
  return { definitions, identifiers, paths };
}

/** One tool result as {@link collectSourceFacts} reads it. */
export interface OutputSource {
  label: string;
  index: number;
  text: string;
}

/**
 * Facts of every result, newest first: a fact the agent saw in several results is stated
 * once, with the newest one (its latest sight). `known` facts (files already listed as read
 * or modified) are not repeated. Identifiers seen in many results of the fork rank first.
 */
export function collectSourceFacts(
  sources: readonly OutputSource[],
  known: ReadonlySet<string>,
): SourceFacts[] {
  const weight = new Map<string, number>();
  for (const s of sources)
    for (const [w, n] of identifierCounts(s.text)) weight.set(w, (weight.get(w) ?? 0) + n);
  const stated = new Set(known);
  const out: SourceFacts[] = [];
  for (const s of [...sources].sort((a, b) => b.index - a.index)) {
    const f = outputFacts(s.text, weight);
    const facts = [...f.definitions, ...f.identifiers, ...f.paths].filter((x) => !stated.has(x));
    if (facts.length === 0) continue;
    for (const x of facts) stated.add(x);
    out.push({ label: s.label, last: s.index, facts });
  }
  return out.reverse();
}
