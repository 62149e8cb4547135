/**
 * Following the feed from now (`from=latest`), and cursors the feed cannot continue from: one past
 * the tenant's newest numbered event is 410 like an expired one, with `latest_cursor` to resume.
 */
import type { components } from '../../generated/api';
import { startTestService, type RawResponse, type TestService } from '../support/test-service';

type Event = components['schemas']['Event'];

let api: TestService;

beforeAll(async () => {
  api = await startTestService();
});
afterAll(() => api.stop());

const feed = (key: string, query = ''): Promise<RawResponse> =>
  api.send('GET', `/v1/events${query}`, { key });
const cursorAt = (position: number) =>
  Buffer.from(JSON.stringify({ after: position })).toString('base64url');

/** A tenant with `count` numbered events, and the feed's end cursor once all are numbered. */
async function tenantWith(name: string, count: number): Promise<{ key: string; end: string }> {
  const key = await api.createKey(name);
  for (let i = 0; i < count; i++)
    await api.client(key).POST('/v1/projects', { body: { name: `${name} ${i}` } });
  const deadline = Date.now() + 5000;
  for (;;) {
    const page = await feed(key, '?limit=200');
    if (page.json.data.length >= count || Date.now() > deadline) {
      expect(page.json.data).toHaveLength(count);
      return { key, end: page.json.next_cursor };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('from=latest', () => {
  it('answers an empty page at the head; following it shows only what came after', async () => {
    const { key, end } = await tenantWith('follower', 3);
    const latest = await feed(key, '?from=latest');
    expect(latest.status).toBe(200);
    expect(latest.json).toEqual({ data: [], next_cursor: end, has_more: false });
    await api.client(key).POST('/v1/projects', { body: { name: 'after the head' } });
    const polled = await feed(key, `?cursor=${latest.json.next_cursor}&wait=10`);
    expect(
      polled.json.data.map((e: Event) => [e.sequence, (e.data.object as { name: string }).name]),
    ).toEqual([[4, 'after the head']]);
  });

  it('starts at position 0 for a tenant with no events, and long-polls from the head with wait', async () => {
    const key = await api.createKey('newcomer');
    expect((await feed(key, '?from=latest')).json).toEqual({
      data: [],
      next_cursor: cursorAt(0),
      has_more: false,
    });
    const polled = feed(key, '?from=latest&wait=15');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await api.client(key).POST('/v1/projects', { body: { name: 'first' } });
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(answer.json.data.map((e: Event) => e.sequence)).toEqual([1]);
    expect(answer.json.next_cursor).toBe(cursorAt(1));
  });

  it('refuses from with cursor, and any from but latest, naming the parameter', async () => {
    const { key, end } = await tenantWith('both', 1);
    const both = await feed(key, `?from=latest&cursor=${end}`);
    expect(both.status).toBe(400);
    expect(both.json.type).toBe('/problems/invalid-request');
    expect(both.json.errors).toEqual([
      { in: 'query', name: 'from', message: expect.stringContaining('cursor') },
    ]);
    const other = await feed(key, '?from=earliest');
    expect(other.status).toBe(400);
    expect(other.json.errors).toEqual([expect.objectContaining({ in: 'query', name: 'from' })]);
  });
});

describe('a cursor past the newest event', () => {
  it('is 410 with latest_cursor, its detail saying it is past the newest event; resuming from latest_cursor works', async () => {
    const { key, end } = await tenantWith('restored', 2);
    for (const cursor of ['eyJhZnRlciI6OTk5OTk5OTl9', cursorAt(3)]) {
      const ahead = await feed(key, `?cursor=${cursor}`);
      expect(ahead.status).toBe(410);
      expect(ahead.json).toMatchObject({
        type: '/problems/cursor-expired',
        status: 410,
        latest_cursor: end,
      });
      expect(ahead.json.detail).toMatch(/past the newest event/);
      expect(ahead.json.detail).not.toMatch(/no longer kept/);
    }
    const resumed = await feed(key, `?cursor=${end}`);
    expect(resumed.json).toEqual({ data: [], next_cursor: end, has_more: false });
  });

  it('is 410 with wait too, at once; a cursor exactly at the head keeps long-polling', async () => {
    const { key, end } = await tenantWith('at-the-head', 2);
    const started = Date.now();
    const ahead = await feed(key, `?cursor=${cursorAt(3)}&wait=20`);
    expect(ahead.status).toBe(410);
    expect(Date.now() - started).toBeLessThan(10_000);
    const idle = await feed(key, `?cursor=${end}&wait=1`);
    expect(idle.json).toEqual({ data: [], next_cursor: end, has_more: false });
    const polled = feed(key, `?cursor=${end}&wait=15`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await api.client(key).POST('/v1/projects', { body: { name: 'third' } });
    expect((await polled).json.data.map((e: Event) => e.sequence)).toEqual([3]);
  });

  it("is 410 for another tenant's cursor past this tenant's head, with this tenant's latest_cursor", async () => {
    const busy = await tenantWith('busy', 4);
    const quiet = await tenantWith('quiet', 1);
    const foreign = await feed(quiet.key, `?cursor=${busy.end}`);
    expect(foreign.status).toBe(410);
    expect(foreign.json.latest_cursor).toBe(quiet.end);
  });
});
