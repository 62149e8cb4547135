/**
 * A page's rows are measured without serialising them: the count must be the bytes
 * `JSON.stringify` gives, whatever the text holds, or a page could pass its 1 MiB.
 */
import { jsonBytes, maxPageBytes, rowsWithinPageSize } from '../../src/db/page-size';

const serialisedBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

it.each([
  ['plain text', { task_id: 'a', title: 'Write it', description: 'x'.repeat(10_000), version: 3 }],
  ['text JSON escapes', { title: 'say "hi"\\ \n\t\u0001 end', description: '"'.repeat(500) }],
  ['text outside ASCII', { title: 'é'.repeat(100), description: '💡 idée 日本語' }],
  ['a lone surrogate', { title: 'a\ud800b' }],
  [
    'null, numbers and nested values',
    { description: null, version: 12345678901, ratio: -1.5e-7, flag: true, data: { a: [1, 'é'] } },
  ],
  ['a field left out and odd keys', { gone: undefined, 'k"e\\y': 'v', é: 'v' }],
  ['no field', {}],
])('counts the bytes of %s exactly', (_name, row) => {
  expect(jsonBytes(row)).toBe(serialisedBytes(row));
});

it('keeps the rows that fit, and always the first', () => {
  const row = (units: number) => ({ description: 'é'.repeat(units) });
  // Each about a quarter of the limit in UTF-8 (é is two bytes): four do not fit with their keys.
  const quarter = row(maxPageBytes / 8);
  expect(rowsWithinPageSize([quarter, quarter, quarter, quarter, quarter])).toBe(3);
  expect(rowsWithinPageSize([row(maxPageBytes), quarter])).toBe(1);
  const small = Array.from({ length: 200 }, () => row(100));
  expect(rowsWithinPageSize(small)).toBe(200);
  // The exact count is used once the quick bound passes the limit: 200 rows of 2,000 units may
  // be 2.4 MB as `\uXXXX` escapes, and are 0.8 MB as UTF-8.
  expect(rowsWithinPageSize(Array.from({ length: 200 }, () => row(2000)))).toBe(200);
});
