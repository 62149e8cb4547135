/**
 * The numbering protocol: each tenant's waiting events get the next sequences in the order they
 * were written, only while the lease is this holder's, a batch at a time; a write that finds its
 * rows changed since they were read makes the transaction run again rather than number anything
 * twice.
 */
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { WriteConflictError } from '../../src/db/database-errors';
import type { Lease } from '../../src/events/leases-repository';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import type { Transaction } from '../../src/db/transactions';
import {
  numberPending,
  sequencesFor,
  type NumberingRepositories,
} from '../../src/events/numbering-protocol';
import { createMigratedDatabase } from '../support/test-database';

describe('sequencesFor', () => {
  const event = (event_id: string, tenant_id: string) => ({ event_id, tenant_id });

  it("goes on from each tenant's last sequence, in the order the events were found", () => {
    const { sequences, last } = sequencesFor(
      [event('e1', 'a'), event('e2', 'b'), event('e3', 'a'), event('e4', 'new'), event('e5', 'b')],
      new Map([
        ['b', 7],
        ['a', 41],
      ]),
    );
    expect(sequences).toEqual([
      ['e1', 42],
      ['e2', 8],
      ['e3', 43],
      ['e4', 1],
      ['e5', 9],
    ]);
    // The last sequences move on in the order they were read, then the tenants numbered first now.
    expect([...last]).toEqual([
      ['b', 9],
      ['a', 43],
      ['new', 1],
    ]);
  });

  it('moves on only the last sequences of the tenants it numbers', () => {
    const { last } = sequencesFor([event('e1', 'a')], new Map([['idle', 5]]));
    expect([...last]).toEqual([['a', 1]]);
    expect(sequencesFor([], new Map([['idle', 5]]))).toEqual({ sequences: [], last: new Map() });
  });
});

describe('numberPending on the database', () => {
  let database: Awaited<ReturnType<typeof createMigratedDatabase>>;
  let knex: Knex;
  let repositories: Repositories;
  const lease: Lease = { name: 'event-numbering', holder: randomUUID(), ttlMs: 60_000 };
  const createdAt = '2026-01-01 00:00:00.000';

  beforeAll(async () => {
    database = await createMigratedDatabase();
    knex = database.knex;
    repositories = createRepositories(knex);
    expect(await repositories.leases.claim(lease)).toBe(true);
  });
  afterAll(() => database.close());

  const tenant = async () => {
    const tenantId = randomUUID();
    await knex('tenants').insert({ tenant_id: tenantId, name: tenantId, created_at: createdAt });
    return tenantId;
  };
  /** Writes an event awaiting its number, as a change's transaction does (or with NULL, as an older instance did). */
  const written = async (tenantId: string, sequence: 0 | null = 0) => {
    const eventId = uuidv7();
    await knex('events').insert({
      event_id: eventId,
      tenant_id: tenantId,
      sequence,
      type: 'project.created',
      project_id: randomUUID(),
      request_id: 'test',
      data: '{}',
      created_at: createdAt,
    });
    return eventId;
  };
  const sequenceOf = async (eventId: string) =>
    Number((await knex('events').first('sequence').where('event_id', eventId))!.sequence);

  it("numbers the waiting events of every tenant, oldest written first, on from each tenant's last sequence", async () => {
    const [a, b] = [await tenant(), await tenant()];
    const first = [await written(a), await written(b), await written(a, null)];
    expect(await numberPending(repositories, lease)).toEqual({
      numbered: 3,
      lastSequences: new Map([
        [a, 2],
        [b, 1],
      ]),
      createdAtMs: [1, 2, 3].map(() => Date.parse('2026-01-01T00:00:00.000Z')),
      moreMayWait: false,
    });
    expect(await Promise.all(first.map(sequenceOf))).toEqual([1, 1, 2]);

    const then = [await written(b), await written(a)];
    const numbered = await numberPending(repositories, lease);
    expect(numbered?.lastSequences).toEqual(
      new Map([
        [a, 3],
        [b, 2],
      ]),
    );
    expect(await Promise.all(then.map(sequenceOf))).toEqual([2, 3]);
    expect(await repositories.events.lastSequences([a, b])).toEqual(numbered?.lastSequences);
  });

  it('numbers a batch at a time, and says when a full batch means more may wait', async () => {
    const a = await tenant();
    const events = [await written(a), await written(a), await written(a)];
    expect(await numberPending(repositories, lease, 2)).toMatchObject({
      numbered: 2,
      moreMayWait: true,
    });
    expect(await Promise.all(events.map(sequenceOf))).toEqual([1, 2, 0]);
    expect(await numberPending(repositories, lease, 2)).toMatchObject({
      numbered: 1,
      moreMayWait: false,
    });
    expect(await sequenceOf(events[2])).toBe(3);
  });

  it('skips the read for waiting events when told some wait, and still numbers nothing when none do', async () => {
    let reads = 0;
    const counting = {
      ...repositories,
      events: {
        ...repositories.events,
        anyAwaitingNumber: () => (reads++, repositories.events.anyAwaitingNumber()),
      },
    };
    const eventId = await written(await tenant());
    expect(await numberPending(counting, lease, 500, true)).toMatchObject({ numbered: 1 });
    expect(await sequenceOf(eventId)).toBe(1);
    expect(reads).toBe(0);
    expect(await numberPending(counting, lease, 500, true)).toMatchObject({ numbered: 0 });
    expect(await numberPending(counting, lease)).toMatchObject({ numbered: 0 });
    expect(reads).toBe(1);
  });

  it('numbers nothing while another holds the lease', async () => {
    const eventId = await written(await tenant());
    expect(await numberPending(repositories, { ...lease, holder: randomUUID() })).toBeUndefined();
    expect(await sequenceOf(eventId)).toBe(0);
    await numberPending(repositories, lease);
    expect(await sequenceOf(eventId)).toBe(1);
  });

  it('begins no transaction when nothing waits', async () => {
    const numbering = jest.spyOn(repositories.events, 'numbering');
    expect(await numberPending(repositories, lease)).toMatchObject({
      numbered: 0,
      moreMayWait: false,
    });
    expect(numbering).not.toHaveBeenCalled();
    numbering.mockRestore();
  });
});

describe('numberPending when another numbering wrote first', () => {
  const trx = {} as Transaction;
  /** Repositories that find two events of tenant `a` (last sequence 3) and write as told. */
  const finding = (writes: {
    numbered: (asked: number) => number;
    moved: boolean;
  }): NumberingRepositories => ({
    events: {
      anyAwaitingNumber: async () => true,
      numbering: (work) => work(trx),
      oldestAwaitingNumber: async () => [
        { event_id: 'e1', tenant_id: 'a', created_at: '2026-01-01 00:00:00.000' },
        { event_id: 'e2', tenant_id: 'a', created_at: '2026-01-01 00:00:00.000' },
      ],
      lastSequences: async () => new Map([['a', 3]]),
      setSequences: async (_trx, sequences) => writes.numbered(sequences.length),
      moveLastSequence: async () => writes.moved,
    },
    leases: { renewWithin: async () => true },
  });
  const lease: Lease = { name: 'event-numbering', holder: 'me', ttlMs: 60_000 };

  it('runs again when an event it read as waiting has been numbered meanwhile', async () => {
    const repositories = finding({ numbered: (asked) => asked - 1, moved: true });
    await expect(numberPending(repositories, lease)).rejects.toBeInstanceOf(WriteConflictError);
  });

  it("runs again when a tenant's last sequence has moved on since it was read", async () => {
    const repositories = finding({ numbered: (asked) => asked, moved: false });
    await expect(numberPending(repositories, lease)).rejects.toBeInstanceOf(WriteConflictError);
  });

  it('numbers them when every write finds what it read', async () => {
    const repositories = finding({ numbered: (asked) => asked, moved: true });
    expect(await numberPending(repositories, lease)).toMatchObject({
      numbered: 2,
      lastSequences: new Map([['a', 5]]),
    });
  });
});
