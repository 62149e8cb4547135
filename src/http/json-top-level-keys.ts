/**
 * The keys of a JSON object, read from its text without building it: parsing a body of thousands
 * of fields and then listing the keys of what it built costs several times more, as each new key
 * is a new property of one object. The text is read character code by character code, which is
 * cheaper than matching each token with a regular expression. Each key comes with where its
 * value's text is, so that a value can be left out of the parse.
 */

const tab = 9;
const lineFeed = 10;
const carriageReturn = 13;
const space = 32;
const quote = 34;
const plus = 43;
const comma = 44;
const minus = 45;
const dot = 46;
const slash = 47;
const zero = 48;
const nine = 57;
const colon = 58;
const upperE = 69;
const leftBracket = 91;
const backslash = 92;
const rightBracket = 93;
const lowerB = 98;
const lowerE = 101;
const lowerF = 102;
const lowerN = 110;
const lowerR = 114;
const lowerT = 116;
const lowerU = 117;
const leftBrace = 123;
const rightBrace = 125;

const isDigit = (c: number) => c >= zero && c <= nine;
const isHexDigit = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** What may follow a backslash besides `u`: " \ / b f n r t (RFC 8259). */
const isShortEscape = (c: number) =>
  c === quote ||
  c === backslash ||
  c === slash ||
  c === lowerB ||
  c === lowerF ||
  c === lowerN ||
  c === lowerR ||
  c === lowerT;

/** Past the whitespace from `at`. */
function skipWhitespace(text: string, at: number): number {
  for (
    let c = text.charCodeAt(at);
    c === space || c === lineFeed || c === carriageReturn || c === tab;
    c = text.charCodeAt(++at)
  );
  return at;
}

/** From the opening quote at `at`: past the closing quote, or -1 where the string breaks the grammar. */
function skipString(text: string, at: number): number {
  for (at++; at < text.length;) {
    const c = text.charCodeAt(at++);
    if (c === quote) return at;
    if (c < space) return -1;
    if (c === backslash) {
      const escaped = text.charCodeAt(at++);
      if (escaped === lowerU) {
        for (let i = 0; i < 4; i++) if (!isHexDigit(text.charCodeAt(at++))) return -1;
      } else if (!isShortEscape(escaped)) {
        return -1;
      }
    }
  }
  return -1;
}

/** Past the digits from `at`, or -1 where there are none. */
function skipDigits(text: string, at: number): number {
  const start = at;
  while (isDigit(text.charCodeAt(at))) at++;
  return at > start ? at : -1;
}

/** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` from `at`: past it, or -1. */
function skipNumber(text: string, at: number): number {
  if (text.charCodeAt(at) === minus) at++;
  at = text.charCodeAt(at) === zero ? at + 1 : skipDigits(text, at);
  if (at !== -1 && text.charCodeAt(at) === dot) at = skipDigits(text, at + 1);
  if (at === -1) return -1;
  const c = text.charCodeAt(at);
  if (c !== lowerE && c !== upperE) return at;
  const sign = text.charCodeAt(++at);
  return skipDigits(text, sign === plus || sign === minus ? at + 1 : at);
}

/** Past `true`, `false` or `null` at `at`, or -1. */
function skipLiteral(text: string, at: number): number {
  for (const word of ['true', 'false', 'null'])
    if (text.startsWith(word, at)) return at + word.length;
  return -1;
}

/** What the reader expects next. */
const enum Expect {
  Value,
  Key,
  /** A comma, the end of the container, or the end of the text. */
  AfterValue,
}

/** The fields of a top-level object: each key, and where its value's text starts and ends. */
export interface TopLevelFields {
  keys: string[];
  valueStarts: number[];
  valueEnds: number[];
}

/**
 * The fields of the top-level object of `text`, in the order sent (a repeated key each time); or
 * undefined when `text` is not strict JSON (RFC 8259, as JSON.parse reads it) or its top level is
 * not an object. Never more lenient than JSON.parse: what it cannot vouch for is undefined.
 */
export function topLevelFields(text: string): TopLevelFields | undefined {
  const keys: string[] = [];
  const valueStarts: number[] = [];
  const valueEnds: number[] = [];
  /** The containers the reader is in, innermost last: true for an object, false for an array. */
  const inObject: boolean[] = [];
  let at = skipWhitespace(text, 0);
  if (text.charCodeAt(at) !== leftBrace) return undefined;
  let expect = Expect.Value;
  for (;;) {
    at = skipWhitespace(text, at);
    const c = text.charCodeAt(at);
    if (expect === Expect.Value) {
      if (inObject.length === 1) valueStarts.push(at);
      if (c === leftBrace || c === leftBracket) {
        const object = c === leftBrace;
        at = skipWhitespace(text, at + 1);
        if (text.charCodeAt(at) === (object ? rightBrace : rightBracket)) {
          at++;
          if (inObject.length === 1) valueEnds.push(at);
          expect = Expect.AfterValue;
        } else {
          inObject.push(object);
          expect = object ? Expect.Key : Expect.Value;
        }
        continue;
      }
      at =
        c === quote
          ? skipString(text, at)
          : c === minus || isDigit(c)
            ? skipNumber(text, at)
            : skipLiteral(text, at);
      if (at === -1) return undefined;
      if (inObject.length === 1) valueEnds.push(at);
      expect = Expect.AfterValue;
    } else if (expect === Expect.Key) {
      const start = at;
      if (c !== quote || (at = skipString(text, at)) === -1) return undefined;
      if (inObject.length === 1) {
        const spelt = text.slice(start + 1, at - 1);
        keys.push(spelt.includes('\\') ? (JSON.parse(text.slice(start, at)) as string) : spelt);
      }
      at = skipWhitespace(text, at);
      if (text.charCodeAt(at) !== colon) return undefined;
      at++;
      expect = Expect.Value;
    } else {
      if (inObject.length === 0)
        return at === text.length ? { keys, valueStarts, valueEnds } : undefined;
      const object = inObject[inObject.length - 1];
      if (c === comma) {
        at++;
        expect = object ? Expect.Key : Expect.Value;
      } else if (c === (object ? rightBrace : rightBracket)) {
        at++;
        inObject.pop();
        if (inObject.length === 1) valueEnds.push(at);
      } else {
        return undefined;
      }
    }
  }
}

/** The keys of the top-level object of `text` (see topLevelFields). */
export function topLevelKeys(text: string): string[] | undefined {
  return topLevelFields(text)?.keys;
}
