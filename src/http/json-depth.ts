/**
 * How deep a JSON text nests, read from its bytes before it is parsed: a body of a few thousand
 * nested arrays costs nothing to refuse here, where every walk of the parsed value would recurse
 * as deep. The reading is lenient (it only tells strings from the rest): a text it reads wrongly
 * is not JSON, and the parser refuses it whatever this says.
 */
import { pointerSegment } from './strict-input';

/** The deepest a body may nest: the body is level 1, each object or array in it one level more. */
export const maxDepth = 32;

const quote = 0x22;
const comma = 0x2c;
const leftBracket = 0x5b;
const backslash = 0x5c;
const rightBracket = 0x5d;
const leftBrace = 0x7b;
const rightBrace = 0x7d;

/** Whether `raw` opens more than `count` objects and arrays in all: fewer, and it cannot nest deeper. */
function opensMoreThan(raw: Buffer, count: number): boolean {
  let seen = 0;
  for (const opening of [leftBrace, leftBracket]) {
    for (let at = raw.indexOf(opening); at !== -1; at = raw.indexOf(opening, at + 1))
      if (++seen > count) return true;
  }
  return false;
}

/** Past the string whose opening quote is at `at` (the end of `raw` when it never closes). */
function skipString(raw: Buffer, at: number): number {
  for (;;) {
    at = raw.indexOf(quote, at + 1);
    if (at === -1) return raw.length;
    let backslashes = 0;
    while (raw[at - 1 - backslashes] === backslash) backslashes++;
    if (backslashes % 2 === 0) return at + 1;
  }
}

/** A key's text as JSON spells it, decoded (as sent where it is not valid JSON). */
function keyText(raw: Buffer, start: number, end: number): string {
  const spelt = raw.toString('utf8', start, end);
  try {
    return JSON.parse(spelt) as string;
  } catch {
    return spelt.slice(1, -1);
  }
}

/**
 * The JSON pointer of the first object or array nested past `maxDepth` in `raw`, or undefined
 * when nothing is. Each level keeps only where its current key is or which item it is at; the
 * pointer is spelt out only for a body that is refused.
 */
export function tooDeepAt(raw: Buffer): string | undefined {
  if (!opensMoreThan(raw, maxDepth)) return undefined;
  /** For each open level: an object (true) or an array. */
  const inObject: boolean[] = [];
  /** For each open level: an array's item index, or where an object's current key starts and ends. */
  const item: number[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  /** Whether the next string in an object is its key (after `{` or `,`). */
  let expectKey = false;
  for (let at = 0; at < raw.length;) {
    const c = raw[at];
    if (c === quote) {
      const end = skipString(raw, at);
      if (expectKey) {
        const level = inObject.length - 1;
        keyStart[level] = at;
        keyEnd[level] = end;
        expectKey = false;
      }
      at = end;
      continue;
    }
    if (c === leftBrace || c === leftBracket) {
      if (inObject.length === maxDepth) return pointerTo(raw, inObject, item, keyStart, keyEnd);
      inObject.push(c === leftBrace);
      item[inObject.length - 1] = 0;
      keyStart[inObject.length - 1] = -1;
      expectKey = c === leftBrace;
    } else if (c === rightBrace || c === rightBracket) {
      inObject.pop();
      expectKey = false;
    } else if (c === comma && inObject.length > 0) {
      const level = inObject.length - 1;
      if (inObject[level]) expectKey = true;
      else item[level]++;
    }
    at++;
  }
  return undefined;
}

function pointerTo(
  raw: Buffer,
  inObject: boolean[],
  item: number[],
  keyStart: number[],
  keyEnd: number[],
): string {
  let pointer = '';
  for (let level = 0; level < inObject.length; level++) {
    const segment = !inObject[level]
      ? String(item[level])
      : keyStart[level] === -1
        ? ''
        : keyText(raw, keyStart[level], keyEnd[level]);
    pointer += '/' + pointerSegment(segment);
  }
  return pointer;
}
