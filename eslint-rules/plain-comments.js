// Comments in shipped code, dev tools and tests are read by people who have only this
// repository. A bare rule id ("C3", "L7:") or a pointer into a document that is not here
// ("vtcode-notes §4", "wire-formats", "issue 16", "the brief") tells them nothing, so this rule
// rejects both; the comment should say what the rule means. Rule ids stay allowed in test
// names, and docs/architecture.md glosses every one of them.

// The behaviour rules' ids, exactly: a letter for the area and its number. Nothing else of the
// form letter + digits is flagged (V8, UTF8, P99, ES2022 are words, not rule ids).
const RULE_ID =
  /\b(?:A[1-5]|B[1-4]|C(?:1[01]|[1-9])|D[1-3]|H[1-6]|L[1-8]|N[1-5]|O[1-3]|P1|R[12]|S[1-5]|T[1-3])[a-z]?\b/g;

// Ids that are also ordinary words in some contexts: the comment around them decides.
const ORDINARY_USE = {
  H2: /HTTP/i,
  S3: /Amazon|AWS|bucket/i,
  R2: /Cloudflare/i,
  D3: /d3\.js|charting/i,
  L1: /cache line|CPU cache|L1 cache/i,
  L2: /cache line|CPU cache|L2 cache/i,
  A4: /paper/i,
};

// Pointers into documents that live outside the repository, and section signs (§4, § 2.8).
const OUTSIDE_DOCUMENT = [
  /\bvtcode-notes\b/g,
  /\bwire-formats\b/g,
  /\b(?:SPEC|peers|toolchain|xstate|SOURCES)\.md\b/g,
  /\bSPEC\b/g,
  /§\s?\d+/g,
  /\b[Ii]ssues? #?\d+\b/g,
  /\bthe brief\b/gi,
  /\bhelper [A-Z]\b/g,
  /\b(?:the seed's|seed document)\b/gi,
  /\b(?:in|from|by|per|see|than|unlike|like) the seed\b/gi,
];

/** Every citation in a comment's text: `{ index, text, kind }`, kind `rule id` or `document`. */
export function citationsIn(text) {
  const found = [];
  for (const m of text.matchAll(RULE_ID)) {
    const ordinary = ORDINARY_USE[m[0]];
    if (ordinary === undefined || !ordinary.test(text))
      found.push({ index: m.index, text: m[0], kind: 'rule id' });
  }
  for (const pattern of OUTSIDE_DOCUMENT)
    for (const m of text.matchAll(pattern)) found.push({ index: m.index, text: m[0], kind: 'document' });
  return found.sort((a, b) => a.index - b.index);
}

const MESSAGES = {
  'rule id': (text) =>
    `comment cites rule id "${text}": say what the rule means in plain words (rule ids belong in test names; docs/architecture.md glosses them).`,
  document: (text) =>
    `comment points to "${text}", which is not in this repository: say what it means here instead.`,
};

/** ESLint rule: comments cite neither rule ids nor documents outside the repository. */
export const plainComments = {
  meta: {
    type: 'suggestion',
    docs: { description: 'comments say what they mean without rule ids or outside documents' },
    schema: [],
  },
  create(context) {
    const source = context.sourceCode;
    return {
      Program() {
        for (const comment of source.getAllComments()) {
          // The comment's text starts after its opening `//` or `/*`.
          const start = comment.range[0] + 2;
          for (const c of citationsIn(comment.value)) {
            const from = source.getLocFromIndex(start + c.index);
            const to = source.getLocFromIndex(start + c.index + c.text.length);
            context.report({ loc: { start: from, end: to }, message: MESSAGES[c.kind](c.text) });
          }
        }
      },
    };
  },
};

export default { rules: { 'plain-comments': plainComments } };
