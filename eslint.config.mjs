// typescript-eslint's recommended rules, and the layering: nothing lower imports anything higher.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Imports a folder of src/ may not make, as patterns relative to any depth, with the reason. */
const forbid = (folders, message) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        { group: folders.flatMap((folder) => [`**/${folder}`, `**/${folder}/**`]), message },
      ],
    },
  ],
});
const rooms = ['webhooks', 'events', 'cleanup', 'background', 'api-keys'];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'generated/**',
      'clients/typescript/src/api.ts',
      'clients/typescript/dist/**',
      'node_modules/**',
      'data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Express tells an error handler by its four parameters; the unused ones are named _.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // A binding assigned once, after the closures that read it are made, stays a let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Control characters are what the input checks look for.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read JSON answers whose shape the test itself asserts.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['scripts/**/*.js', 'test/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/db/**/*.ts'],
    rules: forbid(
      ['http', 'handlers', 'app', ...rooms, 'cli', 'server'],
      'src/db is the lowest layer: it imports nothing of http, handlers, app, the rooms beside requests, cli or server.',
    ),
  },
  {
    files: rooms.map((room) => `src/${room}/**/*.ts`),
    rules: forbid(
      ['http', 'handlers', 'cli', 'server'],
      'Work beside requests knows nothing of HTTP: it imports src/db and its own room; server.ts wires rooms together.',
    ),
  },
  {
    files: ['src/app/**/*.ts'],
    rules: forbid(
      ['http', 'handlers', ...rooms, 'cli', 'server'],
      'The unit of work sits between the handlers and src/db: it knows nothing of HTTP, handlers or the rooms beside requests.',
    ),
  },
  {
    files: ['src/handlers/**/*.ts'],
    rules: forbid(
      ['http', 'cli', 'server'],
      'Handlers sit below the HTTP layer: they get their input as plain values and throw errors that describe themselves.',
    ),
  },
  {
    files: ['src/contract-testing/**/*.ts'],
    rules: forbid(
      ['http', 'handlers', 'app', 'db', ...rooms, 'cli', 'server'],
      'Contract testing drives the sandbox over HTTP, as a consumer would: it imports nothing of the service; src/cli/contract.ts starts the sandbox.',
    ),
  },
  {
    files: ['src/http/**/*.ts'],
    rules: forbid(
      ['cli', 'server'],
      'The HTTP layer is wired by server.ts; it does not start the service.',
    ),
  },
);
