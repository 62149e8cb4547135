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
/** Features: each a folder with its own SQL, importing src/db, src/app and src/background, never another feature. */
const features = ['webhooks', 'events', 'cleanup', 'api-keys'];
/** What only the top composes: the service (server.ts), the CLI, and every repository put together. */
const top = ['cli', 'server', 'all-repositories'];

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
    files: ['scripts/**/*.js', 'test/**/*.js', 'clients/typescript/examples/pact-consumer/*.js'],
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
      ['http', 'handlers', 'app', 'background', ...features, ...top],
      'src/db is the lowest layer (shared SQL plumbing and the core resources): it imports no feature, nothing of http, handlers or app, and nothing of the top.',
    ),
  },
  {
    files: ['src/background/**/*.ts'],
    rules: forbid(
      ['http', 'handlers', 'app', ...features, ...top],
      "src/background is the background jobs' shared timing: it imports no feature and nothing above it.",
    ),
  },
  ...features.map((feature) => ({
    files: [`src/${feature}/**/*.ts`],
    rules: forbid(
      ['http', 'handlers', ...features.filter((other) => other !== feature), ...top],
      'A feature imports src/db, src/app, src/background and its own folder: never another feature, nothing of HTTP or handlers; the top composes features.',
    ),
  })),
  {
    files: ['src/app/**/*.ts'],
    rules: forbid(
      ['http', 'handlers', ...features, ...top],
      'The unit of work sits between the handlers and src/db: it knows nothing of HTTP, handlers or the features.',
    ),
  },
  {
    files: ['src/handlers/**/*.ts'],
    rules: forbid(
      ['http', ...top],
      'Handlers sit below the HTTP layer: they get their input as plain values and throw errors that describe themselves.',
    ),
  },
  {
    files: ['src/contract-testing/**/*.ts'],
    rules: forbid(
      ['http', 'handlers', 'app', 'db', 'background', ...features, ...top],
      'Contract testing drives the sandbox over HTTP, as a consumer would: it imports nothing of the service; src/cli/contract.ts starts the sandbox.',
    ),
  },
  {
    files: ['src/versions/**/*.ts'],
    rules: forbid(
      [
        ...['http', 'handlers', 'app', 'db', 'background', 'contract-testing', ...features, ...top],
        ...['errors', 'logger', 'config', 'config-docs', 'api-key-format'],
      ],
      'src/versions (the versions, their changes and documents) imports node built-ins, libraries and src/paths.ts only, so that the service and every tool can use it.',
    ),
  },
  {
    files: ['src/http/**/*.ts'],
    rules: forbid(top, 'The HTTP layer is wired by server.ts; it does not start the service.'),
  },
);
