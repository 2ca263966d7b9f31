// Lint runs inside `npm test`. The one project-specific rule: machines/ stays pure
// (imports only xstate and other machine files), so graphs, diagrams and model tests
// never touch I/O.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
