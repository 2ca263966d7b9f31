// Lint runs inside `npm test`. Project-specific rules: machines/ stays pure (imports only
// xstate and other machine files), so graphs, diagrams and model tests never touch I/O; and
// the layers of src/ only point down (docs/architecture.md draws the picture).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import plainComments from './eslint-rules/plain-comments.js';

// The layers of src/, bottom first. A folder may import its own layer and every layer above
// it in this table, never one below. machines/ (outside src/) sits with the bottom layer.
// Loose files directly in src/ count as the session layer (the package entry re-exports the
// library), except those named in ROOT_FILES.
const LAYERS = [
  { layer: 'core', folders: ['core', 'messages', 'machines'] },
  {
    layer: 'domain',
    folders: ['estimate', 'formats', 'projection', 'summary', 'providers', 'store', 'io', 'stats', 'charts'],
  },
  { layer: 'runtime', folders: ['runtime'] },
  { layer: 'session', folders: ['session', 'entries'] },
  { layer: 'front ends', folders: ['cli', 'adapters', 'serve', 'bin', 'testing', 'restate'] },
];
const ROOT_FILES = { 'src/*.ts': 'session', 'src/version.ts': 'core' };
// Nothing but the bin and the CLI itself imports the CLI (framework adapters neither).
const CLI_IMPORTERS = ['cli', 'bin'];
// The CLI and the proxy are thin front ends over createCompactorSession (the one composition
// root): they reach the machines, the runtime and the store only through src/session.
const VIA_SESSION = {
  cli: ['runtime', 'store', 'machines'],
  serve: ['runtime', 'store', 'machines'],
};
// Development code (benchmarks, replay, diagram rendering) and tests are never shipped.
const NEVER_FROM_SRC = ['dev', 'test'];

/** A relative import that lands in `folder` (src/<folder> from src/, or a top-level folder). */
const into = (folders) => `^(?:\\./|(?:\\.\\./)+)(?:${folders.join('|')})(?:/|$)`;

function layerRules(layer, own) {
  const rank = LAYERS.findIndex((l) => l.layer === layer);
  const above = LAYERS.slice(rank + 1);
  const patterns = above.map((l) => ({
    regex: into(l.folders),
    message: `layers point down: the ${layer} layer must not import the ${l.layer} layer (${l.folders.join(', ')}); see docs/architecture.md.`,
  }));
  if (!CLI_IMPORTERS.includes(own) && rank === LAYERS.length - 1)
    patterns.push({ regex: into(['cli']), message: 'only src/bin imports the CLI (src/cli).' });
  for (const folder of VIA_SESSION[own] ?? [])
    patterns.push({
      regex: into([folder]),
      message: `src/${own} uses ${folder} only through src/session (createCompactorSession and its exports).`,
    });
  patterns.push({
    regex: into(NEVER_FROM_SRC),
    message: 'src/ is shipped: it must not import dev/ or test/.',
  });
  return { 'no-restricted-imports': ['error', { patterns }] };
}

const layerConfigs = [
  ...LAYERS.flatMap(({ layer, folders }) =>
    folders
      .filter((f) => f !== 'machines')
      .map((f) => ({ files: [`src/${f}/**/*.ts`], rules: layerRules(layer, f) })),
  ),
  ...Object.entries(ROOT_FILES).map(([file, layer]) => ({ files: [file], rules: layerRules(layer, file) })),
];

// Where comments must be plain words: shipped code, machines, dev tools and every test file.
const PLAIN_COMMENT_FILES = ['src', 'machines', 'dev', 'test'].map((d) => `${d}/**/*.{ts,js,mjs}`);

// Tests name the code they check by the aliases of tsconfig.json ("paths"), so a test file can
// move without its imports changing: no relative climb out of test/ into the code, and none from
// a test into test/support/.
const TEST_IMPORTS = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const CODE_BY_ALIAS = {
  regex: '^(?:\\.\\./)+(?:src|machines|dev)(?:/|$)',
  message: 'tests import the code by its alias (#src/…, #machines/…, #dev/…), not by a relative path.',
};
const SUPPORT_BY_ALIAS = {
  regex: '^(?:\\.\\./)+support(?:/|$)',
  message: 'tests import helpers from test/support/ as #support/…, not by a relative path.',
};

// Files hold one concept, functions stay short (~450 lines a file, what one concept needs
// rather than forcing splits; ~60 a function). Blank lines and comments do not count:
// explaining why is never penalised.
const SIZE_RULES = {
  'max-lines': ['error', { max: 450, skipBlankLines: true, skipComments: true }],
  'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
};

// Every error the library throws belongs to one family (src/core/errors.ts), so callers can
// tell them apart by `code` and recognise them across package copies. Built-in error
// constructors and error classes outside that module are refused. The one exception is
// p-retry's AbortError, which p-retry demands to stop retrying; it never leaves providers/http.ts.
const BUILTIN_ERRORS =
  'Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError';
const ERROR_FAMILY_RULES = {
  'no-restricted-syntax': [
    'error',
    {
      selector: `NewExpression[callee.name=/^(${BUILTIN_ERRORS})$/]`,
      message:
        'throw an error of the family in src/core/errors.ts (CompactorError and its subclasses), not a built-in one.',
    },
    {
      selector: 'ClassDeclaration[superClass.name=/Error$/]',
      message: 'error classes live in src/core/errors.ts, under CompactorError.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'diagrams/**', 'coverage/**', 'out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-control-regex': 'off',
    },
  },
  ...layerConfigs,
  { files: ['test/**/*.ts'], rules: TEST_IMPORTS([CODE_BY_ALIAS, SUPPORT_BY_ALIAS]) },
  { files: ['test/support/**/*.ts'], rules: TEST_IMPORTS([CODE_BY_ALIAS]) },
  // The jest environment and the tiktoken it shares are plain CommonJS, loaded with no transform.
  {
    files: ['test/support/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', exports: 'writable', globalThis: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['src/**/*.ts'], rules: SIZE_RULES },
  { files: ['src/**/*.ts'], ignores: ['src/core/errors.ts'], rules: ERROR_FAMILY_RULES },
  // Comments say what they mean: no rule ids (those stay in test names) and no pointers into
  // documents outside the repository (eslint-rules/plain-comments.js).
  {
    files: PLAIN_COMMENT_FILES,
    plugins: { local: plainComments },
    rules: { 'local/plain-comments': 'error' },
  },
  {
    files: ['machines/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!xstate$|xstate/|\\.{1,2}/).*',
              message: 'machines/ may import only xstate and other machine files (I/O lives in src/ actors).',
            },
            { regex: '^\\.\\./\\.\\./src|^\\.\\./src', message: 'machines/ must not import from src/.' },
          ],
        },
      ],
    },
  },
);
