/**
 * The layering is a lint rule: an upward import (src/db reaching into HTTP, a room beside requests
 * reaching into the HTTP layer, a handler into the router) fails `npm run lint`, naming the rule
 * broken; the imports the flow allows pass.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths';

const eslint = path.join(projectRoot, 'node_modules', '.bin', 'eslint');

/** ESLint's findings for `code` as if it were the file `file`. */
function lint(file: string, code: string): Array<{ ruleId: string; message: string }> {
  const run = spawnSync(eslint, ['--format', 'json', '--stdin', '--stdin-filename', file], {
    cwd: projectRoot,
    input: code,
    encoding: 'utf8',
  });
  if (run.stdout === '') throw new Error(`eslint failed: ${run.stderr}`);
  return JSON.parse(run.stdout)[0].messages;
}

it.each([
  ['src/db/upward.ts', "import { createApp } from '../http/app';", 'src/db is the lowest layer'],
  [
    'src/db/upward.ts',
    "import { startDeliveryWorker } from '../webhooks/delivery-worker';",
    'src/db is the lowest layer',
  ],
  [
    'src/webhooks/upward.ts',
    "import { problemFor } from '../http/problems';",
    'knows nothing of HTTP',
  ],
  ['src/events/upward.ts', "import { startService } from '../server';", 'knows nothing of HTTP'],
  [
    'src/contract-testing/inward.ts',
    "import { createRepositories } from '../db/repositories';",
    'Contract testing drives the sandbox over HTTP',
  ],
  [
    'src/db/upward.ts',
    "import { createUnitOfWork } from '../app/unit-of-work';",
    'src/db is the lowest layer',
  ],
  [
    'src/app/upward.ts',
    "import type { HttpReply } from '../http/http-reply';",
    'knows nothing of HTTP',
  ],
  [
    'src/handlers/upward.ts',
    "import type { Exchange } from '../http/exchange';",
    'below the HTTP layer',
  ],
])('refuses %s importing upward: %s', (file, code, reason) => {
  const findings = lint(
    file,
    `${code}\nexport const used = [${code.match(/\{ (?:type )?(\w+) \}/)![1]}];\n`,
  );
  expect(findings).toEqual([
    expect.objectContaining({
      ruleId: 'no-restricted-imports',
      message: expect.stringContaining(reason),
    }),
  ]);
});

it('lets each layer import the one below it', () => {
  const allowed = [
    [
      'src/http/fine.ts',
      "import { createRepositories } from '../db/repositories';\nexport const used = createRepositories;\n",
    ],
    [
      'src/webhooks/fine.ts',
      "import type { Repositories } from '../db/repositories';\nexport type Used = Repositories;\n",
    ],
    [
      'src/app/fine.ts',
      "import type { Repositories } from '../db/repositories';\nexport type Used = Repositories;\n",
    ],
    [
      'src/http/fine.ts',
      "import { createUnitOfWork } from '../app/unit-of-work';\nexport const used = createUnitOfWork;\n",
    ],
    [
      'src/handlers/fine.ts',
      "import { NotFoundError } from '../errors';\nexport const used = NotFoundError;\n",
    ],
  ];
  for (const [file, code] of allowed) expect([file, lint(file, code)]).toEqual([file, []]);
});
