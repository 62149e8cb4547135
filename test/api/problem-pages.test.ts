/**
 * Each problem type URI resolves to a page describing it (RFC 9457), made from the document's
 * table: every kind the service answers with is in that table, and its page says the table's words.
 */
import { loadDocument } from '../../src/http/document';
import { documentedProblems } from '../../src/http/problem-pages';
import { problemKinds } from '../../src/http/problems';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
const rows = documentedProblems(loadDocument());

beforeAll(async () => {
  api = await startTestService();
});
afterAll(() => api.stop());

it('documents every problem kind the service answers with, and nothing it does not', () => {
  expect(rows.map((row) => row.kind).sort()).toEqual([...problemKinds].sort());
});

it.each(rows)('/problems/$kind answers a page saying when it is answered', async (row) => {
  const res = await fetch(`${api.baseUrl}/problems/${row.kind}`);
  expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  const html = await res.text();
  expect(html).toContain(`<code>/problems/${row.kind}</code>, HTTP status ${row.status}`);
  // The table's words, as a reader of the page sees them.
  const text = html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  expect(text).toContain(`Answered when ${row.when.replace(/`/g, '')}.`);
});

it('answers an unknown problem type as any unknown path', async () => {
  const res = await api.send('GET', '/problems/no-such-problem');
  expect([res.status, res.json.type]).toEqual([404, '/problems/route-not-found']);
});
