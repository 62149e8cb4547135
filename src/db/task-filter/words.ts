/**
 * The words of `text` (a TaskFilter's, a task's title and description): runs of letters and
 * digits (a letter's combining marks included) of its NFC normalisation, compared by case fold.
 * One rule for every evaluator, so that the databases' indexes and the in-memory evaluator agree.
 */
import { createHash } from 'node:crypto';
import { asciiOnly, labelFold } from '../task-planning';

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
/** Whether a character code of lower-case ASCII text is of a word: a-z, 0-9. */
const inAsciiWord = (code: number) => (code >= 97 && code <= 122) || (code >= 48 && code <= 57);

/**
 * The words of a task's title and description as a filter's `text` asks of them: whether a fold
 * is among them. Asked of every event an endpoint with `text` is sent, where splitting the text
 * into a set of folds was most of a filter's cost (a Unicode regular expression, a string and a
 * fold for each word). Most text is ASCII, whose words are the runs of letters and digits and
 * whose folds are its lower case: there a fold is looked for in the lower-cased text, between
 * characters of no word, and the set is made only for other text. Both give taskWords' answer.
 */
export class TaskTextWords {
  private readonly text: string;
  private lowered?: string;
  private folds?: Set<string>;

  constructor(title: string, description: string | null) {
    this.text = taskText(title, description);
    if (asciiOnly.test(this.text)) this.lowered = this.text.toLowerCase();
  }

  has(fold: string): boolean {
    const lowered = this.lowered;
    if (lowered === undefined) return (this.folds ??= foldedWords(this.text)).has(fold);
    // An ASCII word's fold is ASCII letters and digits: no other fold can be one of them.
    if (!asciiFold.test(fold)) return false;
    for (let at = lowered.indexOf(fold); at !== -1; at = lowered.indexOf(fold, at + 1)) {
      const end = at + fold.length;
      if (
        (at === 0 || !inAsciiWord(lowered.charCodeAt(at - 1))) &&
        (end === lowered.length || !inAsciiWord(lowered.charCodeAt(end)))
      )
        return true;
    }
    return false;
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
