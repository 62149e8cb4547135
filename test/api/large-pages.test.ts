/**
 * Pages of the longest items stop at about 1 MiB of JSON and the walk goes on from there; a
 * client that does not take its answers is cut off instead of pinning them in memory.
 */
import net from 'node:net';
import type { components } from '../../generated/api';
import { startTestService, type TestService } from '../support/test-service';

type Task = components['schemas']['Task'];

let api: TestService;
let key: string;
let projectId: string;
const longest = 'é'.repeat(10_000);

beforeAll(async () => {
  api = await startTestService({ config: { slowReaderTimeoutSeconds: 1 } });
  key = await api.createKey('acme');
  projectId = (await api.client(key).POST('/v1/projects', { body: { name: 'long' } })).data!
    .project_id;
  for (let i = 0; i < 120; i++)
    await api
      .client(key)
      .POST('/v1/tasks', { body: { project_id: projectId, title: `t${i}`, description: longest } });
}, 60_000);
afterAll(() => api.stop());

it('stops a page at about 1 MiB, and a walk still returns every task once', async () => {
  const seen: Task[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await api.send(
      'GET',
      `/v1/projects/${projectId}/tasks?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    );
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(res.text)).toBeLessThanOrEqual(1024 * 1024 + 25_000);
    seen.push(...res.json.data);
    cursor = res.json.next_cursor ?? undefined;
    pages++;
  } while (cursor);
  expect(pages).toBeGreaterThan(1);
  expect(seen).toHaveLength(120);
  expect(new Set(seen.map((t) => t.task_id)).size).toBe(120);
}, 30_000);

it('cuts off a client that takes none of its answers', async () => {
  const { hostname, port } = new URL(api.baseUrl);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause(); // takes nothing, while 30 pages are asked for
  const request = `GET /v1/projects/${projectId}/tasks?limit=200 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
  socket.write(request.repeat(30));
  await new Promise((resolve) => setTimeout(resolve, 4000));
  // Then reads what the connection still holds: the service closed it long before the 30th answer.
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  socket.resume();
  await new Promise((resolve) => socket.once('close', resolve));
  expect(received.split('HTTP/1.1 200 OK').length - 1).toBeLessThan(30);
}, 20_000);
