/**
 * The words of `text` (a TaskFilter's, a task's title and description): runs of letters and
 * digits (a letter's combining marks included) of its NFC normalisation, compared by case fold.
 * One rule for every evaluator, so that the databases' indexes and the in-memory evaluator agree.
 */
import { createHash } from 'node:crypto';
import { labelFold } from '../task-planning';

/** A filter's words are at least this many characters long (code points, normalised to NFC). */
export const minWordLength = 3;

const wordPattern = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * The words, normalised to NFC (`cafe\u0301` is `café`, four characters), in order, repeats
 * included.
 */
export const wordsOf = (text: string): string[] => text.normalize('NFC').match(wordPattern) ?? [];

/** The words' case folds, each once. */
export const foldedWords = (text: string): Set<string> => new Set(wordsOf(text).map(labelFold));

/** A task's title and description together, as their words are read. */
const taskText = (title: string, description: string | null): string =>
  description === null ? title : `${title}\n${description}`;

/** The folds of the words of a task's title and description together. */
export const taskWords = (title: string, description: string | null): Set<string> =>
  foldedWords(taskText(title, description));

const asciiFold = /^[a-z0-9]+$/;

/**
 * A filter's word as TaskTextWords looks for it: its fold, and a regular expression finding in
 * ASCII text either the fold as a whole word, in any case, or the first character that is not
 * ASCII (where the text's words need Unicode's rules). A fold that is not ASCII letters and
 * digits is no ASCII word's: for it the expression finds that character alone.
 */
export interface TextWord {
  fold: string;
  pattern: RegExp;
}

export function textWord(fold: string): TextWord {
  const word = asciiFold.test(fold)
    ? [...fold].map((c) => (c >= 'a' ? `[${c}${c.toUpperCase()}]` : c)).join('')
    : undefined;
  // An ASCII word's fold is its lower case; a letter, a digit or any character not ASCII (a
  // combining mark) beside it makes it part of another word.
  return {
    fold,
    pattern: new RegExp(
      word === undefined
        ? '[^\\x00-\\x7f]'
        : `[^\\x00-\\x7f]|(?<![A-Za-z0-9])${word}(?![A-Za-z0-9\\x80-\\uffff])`,
    ),
  };
}

/**
 * The words of a task's title and description as a filter's `text` asks of them: whether a fold
 * is among them. Asked of every event an endpoint with `text` is sent, where splitting the text
 * into a set of folds was most of a filter's cost (a Unicode regular expression, a string and a
 * fold for each word). Most text is ASCII, whose words are the runs of letters and digits and
 * whose folds are its lower case: there one search of each part settles it, and the set is made
 * only when a search meets a character that is not ASCII. Both give taskWords' answer.
 */
export class TaskTextWords {
  private unicode = false;
  private folds?: Set<string>;

  constructor(
    private readonly title: string,
    private readonly description: string | null,
  ) {}

  has(word: TextWord): boolean {
    if (!this.unicode) {
      const found =
        this.found(word.pattern, this.title) ?? this.found(word.pattern, this.description);
      if (found !== undefined) return found;
      if (!this.unicode) return false;
    }
    return (this.folds ??= taskWords(this.title, this.description)).has(word.fold);
  }

  /** true: the word is there; undefined: not there, or the text is not all ASCII. */
  private found(pattern: RegExp, text: string | null): true | undefined {
    const match = text === null ? null : pattern.exec(text);
    if (match === null) return undefined;
    if (match[0].charCodeAt(0) < 0x80) return true;
    this.unicode = true;
    return undefined;
  }
}

/**
 * A folded word as the full-text indexes hold it: 24 hex digits of its SHA-256. Each database
 * splits text into words by rules of its own (MariaDB joins `user_name`, drops stopwords such as
 * `the` and words over 84 characters; SQLite's FTS5 knows Unicode 6.1); hashed, every word is
 * one ASCII token that both index whole and alike, and a match of all of a filter's tokens is a
 * match of all of its words (two words sharing 96 bits of hash being out of reach).
 */
export const wordToken = (fold: string): string =>
  createHash('sha256').update(fold).digest('hex').slice(0, 24);

/**
 * What a task's `search_words` column holds: its words' tokens, each once, space-separated. A
 * fold shorter than a filter's word can match none (folding never makes a word shorter than its
 * NFC form, by which a filter's words are counted), so it is left out.
 */
export const searchWords = (title: string, description: string | null): string =>
  [...taskWords(title, description)]
    .filter((fold) => [...fold].length >= minWordLength)
    .map(wordToken)
    .join(' ');
