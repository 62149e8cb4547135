/**
 * The words of a task's text as a filter's `text` asks of them (TaskTextWords, words.ts): its
 * shortcut for ASCII text answers as the set of folds (taskWords) does, at the edges of words,
 * of the text and of ASCII, and for folds that no ASCII word can have.
 */
import { TaskTextWords, taskWords, textWord } from '../../src/db/task-filter/words';

const texts: Array<[string, string | null]> = [
  ['Launch the login-page', 'then ship v2 in 2026'],
  ['launch', null],
  ['LAUNCHED user_name', "don't page,page.page/123abc ABC123"],
  ['prelaunch launcher', 'relaunch'],
  ['', ''],
  ['Straße', 'STRASSE größte'],
  ['ΣΟΦΟΣ ﬁx', 'İstanbul café cafe\u0301 naïve'],
  ['rocket🚀ship', '日本語 テスト हिन्दी'],
  ['\u212Aelvin', 'kelvin'],
  ['launch caf\u00e9', 'cafe\u0301launch'],
  ['ok zebra\u0301 LAUNCH', '\u00e9launch launch\u00e9 Launch_'],
  ['zebra', 'Zebra\nzebra'],
];
const folds = [
  'launch',
  'launched',
  'the',
  'login',
  'page',
  'age',
  'log',
  'pre',
  'prelaunch',
  'launcher',
  'user',
  'name',
  'user_name',
  'don',
  'ship',
  'v2',
  '2026',
  '123abc',
  'abc123',
  '123',
  'strasse',
  'straße',
  'größte',
  'σοφοσ',
  'σοφος',
  'fix',
  'i̇stanbul',
  'istanbul',
  'café',
  'rocket',
  '日本語',
  'kelvin',
  'elvin',
  'zebra',
  'zebrá',
];

describe('TaskTextWords', () => {
  it.each(texts)('has exactly the folds taskWords gives of %j and %j', (title, description) => {
    const words = new TaskTextWords(title, description);
    const expected = taskWords(title, description);
    // Asked alone, and of one reading of the text after the folds before it.
    for (const fold of [...folds, ...expected]) {
      const alone = new TaskTextWords(title, description).has(textWord(fold));
      const want = expected.has(fold);
      expect([fold, alone, words.has(textWord(fold))]).toEqual([fold, want, want]);
    }
  });
});
