/**
 * The key reader that refuses a flood of unknown fields before JSON.parse must never vouch for a
 * text JSON.parse refuses, and must find exactly the keys JSON.parse's object has, each with the
 * text of its value.
 */
import { topLevelFields, topLevelKeys } from '../../src/http/json-top-level-keys';

/** What JSON.parse makes of `text`: the top-level object's keys, 'not an object', or 'not JSON'. */
function parsed(text: string): string[] | 'not an object' | 'not JSON' {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.keys(value)
    : 'not an object';
}

/** Holds topLevelKeys to JSON.parse for `text`, and each field's value as topLevelFields finds its text. */
function expectAgreement(text: string): void {
  const keys = topLevelKeys(text);
  const expected = parsed(text);
  if (typeof expected === 'string') {
    expect([text, keys]).toEqual([text, undefined]);
    return;
  }
  // JSON.parse keeps a repeated key once, and puts keys that are array indexes first.
  expect([text, [...new Set(keys)].sort()]).toEqual([text, [...expected].sort()]);
  const fields = topLevelFields(text)!;
  // The last of a repeated key is the one JSON.parse keeps.
  const values = Object.fromEntries(
    fields.keys.map((key, i) => [
      key,
      JSON.parse(text.slice(fields.valueStarts[i], fields.valueEnds[i])),
    ]),
  );
  expect([text, values]).toEqual([text, JSON.parse(text)]);
}

it.each([
  '{}',
  ' \t\r\n{ "a" : 1 } \n',
  '{"a":[1,2,{"b":null}],"c":"x\\u0041\\n\\"\\\\\\/\\b\\f\\r\\t"}',
  '{"a":-0.5e+3,"b":0,"c":1E-7,"d":-0,"e":true,"f":false,"g":null,"h":{},"i":[]}',
  '{"\\ud800":1,"\\u00e9t\\u00e9":2,"2":3,"1":4,"a":5,"a":6}',
  '{"a":{"b":[[{"c":[{}]}]]}}',
  '{"🚀":"🚀"}',
])('finds the keys of %s', (text) => expectAgreement(text));

it.each([
  '',
  ' ',
  '[1]',
  '"a"',
  '1',
  'null',
  '{"a":01}',
  '{"a":1,}',
  '{"a":[1,]}',
  '{"a":1 "b":2}',
  '{"a"}',
  '{"a":}',
  '{a:1}',
  "{'a':1}",
  '{"a":"\u0001"}',
  '{"a":"\t"}',
  '{"a":1}x',
  '{"a":1}}',
  '{"a":.5}',
  '{"a":1.}',
  '{"a":1e}',
  '{"a":-}',
  '{"a":+1}',
  '{"a":tru}',
  '{"a":nul}',
  '{"a":True}',
  '{"a":NaN}',
  '{"a":"\\x"}',
  '{"a":"\\u12"}',
  '{"a":"\\u12G4"}',
  '{"a":"x',
  '{',
  '{"a":[}',
  '{"a":[1}',
  '{"a":{]}',
  '\u00a0{"a":1}',
  '\ufeff{"a":1}',
  '{"a":1}\u0000',
])('vouches for nothing in %j', (text) => expectAgreement(text));

it('agrees with JSON.parse on 3,000 texts broken at random from valid ones', () => {
  // A fixed seed: the same texts every run.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const valueOf = (depth: number): unknown =>
    depth > 3 || random() < 0.4
      ? pick([0, -1.5e3, 12, true, false, null, '', 'a"b\\c', '\u0001', 'é🚀', '\ud800'])
      : random() < 0.5
        ? Array.from({ length: Math.floor(random() * 4) }, () => valueOf(depth + 1))
        : Object.fromEntries(
            Array.from({ length: Math.floor(random() * 4) }, (_, i) => [
              pick(['a', 'b"', '1', 'é', `k${i}`]),
              valueOf(depth + 1),
            ]),
          );
  const pieces = [
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    '"',
    '\\',
    ' ',
    '0',
    '-',
    '.',
    'e',
    'true',
    'n',
    'u',
  ];
  for (let i = 0; i < 3000; i++) {
    const text = JSON.stringify(
      { x: valueOf(0), y: valueOf(1) },
      null,
      random() < 0.3 ? 1 : undefined,
    );
    const at = Math.floor(random() * text.length);
    const broken =
      random() < 0.5
        ? text.slice(0, at) + text.slice(at + 1)
        : text.slice(0, at) + pick(pieces) + text.slice(at);
    expectAgreement(text);
    expectAgreement(broken);
  }
});
