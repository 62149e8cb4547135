/**
 * What src/db/driver uses of knex and the drivers that is not their documented API, asked of them
 * directly, so that an upgrade that takes it away fails here by name (see src/db/driver/README.md).
 */
import type { Knex } from 'knex';
import { createMigratedDatabase, testEngine } from '../support/test-database';

let database: Awaited<ReturnType<typeof createMigratedDatabase>>;
let knex: Knex;

/** knex's client, as the driver folder uses it. */
interface ClientInternals {
  acquireConnection(): Promise<Record<string, any>>;
  releaseConnection(connection: object): Promise<unknown>;
  _formatBindings(bindings: unknown[]): unknown[];
}
let client: ClientInternals;

beforeAll(async () => {
  database = await createMigratedDatabase();
  knex = database.knex;
  client = knex.client as ClientInternals;
});
afterAll(() => database.close());

/** Runs `use` on a connection taken from knex's pool the way pipelinedTransaction takes one. */
async function withConnection<T>(use: (connection: Record<string, any>) => Promise<T>): Promise<T> {
  const connection = await client.acquireConnection();
  try {
    return await use(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

it("lends a pooled connection, marked with knex's id for it, and takes it back", async () => {
  await withConnection(async (connection) => expect(typeof connection.__knexUid).toBe('string'));
});

it('hands a connection given with .connection() each statement through the one entry point the pipelined connection offers', async () => {
  await withConnection(async (connection) => {
    const calls: unknown[][] = [];
    const stand =
      testEngine === 'mysql'
        ? {
            __knexUid: connection.__knexUid,
            query: (...args: unknown[]) => (calls.push(args), connection.query(...args)),
          }
        : {
            __knexUid: connection.__knexUid,
            prepare: (...args: unknown[]) => (calls.push(args), connection.prepare(...args)),
          };
    const uids: unknown[] = [];
    const note = (query: { __knexUid?: unknown }) => uids.push(query.__knexUid);
    knex.on('query', note);
    try {
      await knex.raw('select ? as one', [1]).connection(stand);
    } finally {
      knex.off('query', note);
    }
    // mysql2: (an object of the SQL alone, the bindings, a callback), the form query-text and the pipelined connection take apart.
    if (testEngine === 'mysql')
      expect(
        calls.map(([options, bindings, callback]) => [options, bindings, typeof callback]),
      ).toEqual([[{ sql: 'select ? as one' }, [1], 'function']]);
    else expect(calls).toEqual([['select ? as one']]);
    expect(uids).toEqual([connection.__knexUid]);
  });
});

it("announces to knex's query listeners what is emitted on its client", () => {
  const heard: unknown[] = [];
  const note = (query: unknown) => heard.push(query);
  knex.on('query', note);
  try {
    knex.client.emit('query', { sql: 'BEGIN', bindings: [], pipelined: true });
  } finally {
    knex.off('query', note);
  }
  expect(heard).toEqual([{ sql: 'BEGIN', bindings: [], pipelined: true }]);
});

if (testEngine === 'mysql') {
  it("lets mysql2's query be replaced on a connection, and answers a multi-statement with one result and one list of fields per statement", async () => {
    await withConnection(async (connection) => {
      const own = Object.getOwnPropertyDescriptor(connection, 'query');
      let seen = 0;
      const query = connection.query.bind(connection);
      connection.query = (...args: unknown[]) => (seen++, query(...args));
      try {
        await knex.raw('select 1').connection(connection);
        const [results, fields] = await new Promise<[unknown[], unknown[]]>((resolve, reject) =>
          connection.query(
            { sql: 'select 1 as a;\nselect 2 as b' },
            [],
            (error: unknown, results: unknown[], fields: unknown[]) =>
              error ? reject(error) : resolve([results, fields]),
          ),
        );
        expect(results).toEqual([[{ a: 1 }], [{ b: 2 }]]);
        expect(fields).toHaveLength(2);
      } finally {
        if (own) Object.defineProperty(connection, 'query', own);
        else delete connection.query;
      }
      expect(seen).toBe(2);
      // What statement-timeout destroys to end a wait for a server that does not answer.
      expect(typeof connection.stream.destroy).toBe('function');
    });
  });
} else {
  it("converts bindings for better-sqlite3 as a statement's own are (knex's _formatBindings), for the statements the pipelined connection runs itself", () => {
    expect(client._formatBindings([true, 'text', null])).toEqual([1, 'text', null]);
  });
}
