/**
 * LIBRARY_SHIMS=off takes the libraries' own paths: a transaction's every statement goes through
 * knex's own transaction, one round trip each; openapi-backend routes with its own router (and a
 * 405 allows what the compiled router allows); node makes requests and responses its own way.
 * Each side is loaded afresh with the switch set, whatever the environment of the run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { OpenAPIBackend, type Request } from 'openapi-backend';
import express from 'express';
import { loadDocument } from '../src/http/document';
import type * as Transactions from '../src/db/transactions';
import type * as Routing from '../src/http/shims/routing';
import type * as ExpressPrototypes from '../src/http/shims/express-prototypes';
import { databaseWithTenant, projectRow, statementsSent } from './support/statements-sent';

/** The module at `path` as loaded with LIBRARY_SHIMS set to `value`. */
function loadedWith<Module>(value: 'on' | 'off', path: string): Module {
  const before = process.env.LIBRARY_SHIMS;
  process.env.LIBRARY_SHIMS = value;
  try {
    let loaded: Module | undefined;
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded afresh, with the switch as set here
      loaded = require(path) as Module;
    });
    return loaded!;
  } finally {
    if (before === undefined) delete process.env.LIBRARY_SHIMS;
    else process.env.LIBRARY_SHIMS = before;
  }
}

describe('transactions', () => {
  let database: Awaited<ReturnType<typeof databaseWithTenant>>;
  let knex: Knex;
  beforeAll(async () => {
    database = await databaseWithTenant();
    knex = database.knex;
  });
  afterAll(() => database.close());

  /** The statements knex announces for a transaction of a held insert and an awaited one, and how many went pipelined. */
  async function announced(value: 'on' | 'off', id: string) {
    const { inTransaction } = loadedWith<typeof Transactions>(value, '../src/db/transactions');
    const { statements, pipelined, error } = await statementsSent(knex, () =>
      inTransaction(knex, 'request', async ({ trx }) => {
        await trx.later(
          knex('projects')
            .insert(projectRow(`${id}-1`))
            .toSQL(),
        );
        await trx('projects').insert(projectRow(`${id}-2`));
      }),
    );
    return { statements, pipelined, error };
  }

  it('go through knex, a round trip a statement, with the switch off; pipelined with it on', async () => {
    expect(await announced('off', 'off')).toEqual({
      statements: ['BEGIN', 'INSERT', 'INSERT', 'COMMIT'],
      pipelined: 0,
      error: undefined,
    });
    expect(await announced('on', 'on')).toEqual({
      statements: ['BEGIN', 'INSERT', 'INSERT', 'COMMIT'],
      pipelined: 2,
      error: undefined,
    });
    expect(await knex('projects').orderBy('project_id').pluck('project_id')).toEqual([
      'off-1',
      'off-2',
      'on-1',
      'on-2',
    ]);
  });
});

describe('routing', () => {
  const id = '0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
  const paths = [
    '/v1/projects',
    `/v1/projects/${id}`,
    `/v1/projects/${id}/tasks`,
    '/v1/tasks',
    `/v1/tasks/${id}/`,
    '/v1/events',
    '/v1/webhook-endpoints',
    `/v1/webhook-endpoints/${id}`,
    `/v1/webhook-endpoints/${id}/rotate-secret`,
    `/v1/webhook-endpoints/${id}/deliveries`,
    '/v1/nothing',
  ];

  async function installed(value: 'on' | 'off') {
    const api = new OpenAPIBackend({ definition: loadDocument().definition, quick: true });
    await api.init();
    const routes = loadedWith<typeof Routing>(value, '../src/http/shims/routing').installRouter(
      api,
    );
    return { api, routes };
  }

  it("is openapi-backend's own with the switch off, allowing for a 405 what the compiled router allows", async () => {
    const off = await installed('off');
    const on = await installed('on');
    expect(off.api.router.constructor.name).toBe('OpenAPIRouter');
    expect(on.api.router.constructor.name).toBe('CompiledRouter');
    expect(on.api.validator.router).toBe(on.api.router);
    expect(off.routes.getOperations().map((operation) => operation.operationId)).toEqual(
      on.routes.getOperations().map((operation) => operation.operationId),
    );
    for (const path of paths) {
      const request: Request = { method: 'PUT', path, headers: {} };
      expect(off.routes.allowedMethods(request)).toEqual(on.routes.allowedMethods(request));
    }
  });
});

it("leaves node to make requests and responses with the switch off; born with Express's prototypes with it on, which Express then finds in place", async () => {
  const app = express();
  expect(
    loadedWith<typeof ExpressPrototypes>(
      'off',
      '../src/http/shims/express-prototypes',
    ).requestClasses(app),
  ).toEqual({});
  const classes = loadedWith<typeof ExpressPrototypes>(
    'on',
    '../src/http/shims/express-prototypes',
  ).requestClasses(app);
  const server = http.createServer(classes, app);
  let born: object[] = [];
  server.prependListener(
    'request',
    (req, res) => (born = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)]),
  );
  app.get('/', (req, res) => {
    res.json({
      swapped: Object.getPrototypeOf(req) !== born[0] || Object.getPrototypeOf(res) !== born[1],
      express: born[0] === app.request && born[1] === app.response,
      ip: typeof req.ip,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(await response.json()).toEqual({ swapped: false, express: true, ip: 'string' });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
