/**
 * The layering is a lint rule: an upward import (src/db reaching into HTTP or a feature, a feature
 * into the HTTP layer or into another feature, a handler into the router) fails `npm run lint`,
 * naming the rule broken; the imports the flow allows pass.
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
    'src/db/upward.ts',
    "import { eventsRepository } from '../events/events-repository';",
    'src/db is the lowest layer',
  ],
  [
    'src/db/upward.ts',
    "import { createRepositories } from '../all-repositories';",
    'src/db is the lowest layer',
  ],
  [
    'src/background/upward.ts',
    "import { startFeedWatcher } from '../events/feed-watcher';",
    'imports no feature',
  ],
  ['src/webhooks/upward.ts', "import { problemFor } from '../http/problems';", 'A feature imports'],
  ['src/events/upward.ts', "import { startService } from '../server';", 'A feature imports'],
  [
    'src/webhooks/sideways.ts',
    "import { eventsRepository } from '../events/events-repository';",
    'never another feature',
  ],
  [
    'src/cleanup/sideways.ts',
    "import type { WebhookRepositories } from '../webhooks/repositories';",
    'never another feature',
  ],
  [
    'src/app/upward.ts',
    "import type { EventRepositories } from '../events/repositories';",
    'knows nothing of HTTP, handlers or the features',
  ],
  [
    'src/handlers/upward.ts',
    "import type { Repositories } from '../all-repositories';",
    'below the HTTP layer',
  ],
  [
    'src/contract-testing/inward.ts',
    "import { createCoreRepositories } from '../db/repositories';",
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
      "import { createCoreRepositories } from '../db/repositories';\nexport const used = createCoreRepositories;\n",
    ],
    [
      'src/webhooks/fine.ts',
      "import type { CoreRepositories } from '../db/repositories';\nexport type Used = CoreRepositories;\n",
    ],
    [
      'src/events/fine.ts',
      "import { toEvent } from '../db/event-log';\nimport { repeatCycle } from '../background/repeating-cycle';\nexport const used = [toEvent, repeatCycle];\n",
    ],
    [
      'src/handlers/fine.ts',
      "import type { WebhookRepositories } from '../webhooks/repositories';\nexport type Used = WebhookRepositories;\n",
    ],
    [
      'src/server.ts',
      "import { createRepositories } from './all-repositories';\nexport const used = createRepositories;\n",
    ],
    [
      'src/app/fine.ts',
      "import type { CoreRepositories } from '../db/repositories';\nexport type Used = CoreRepositories;\n",
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
