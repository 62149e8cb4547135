import { keptBy } from '../src/kept-by';

describe('keptBy', () => {
  it('makes an answer once for each argument, and makes them again once it holds its most', () => {
    const made: string[] = [];
    const upper = keptBy(3, (word: string) => {
      made.push(word);
      return word.toUpperCase();
    });
    expect(['a', 'b', 'a', 'c', 'b'].map(upper)).toEqual(['A', 'B', 'A', 'C', 'B']);
    expect(made).toEqual(['a', 'b', 'c']);
    // A fourth argument lets the three go: each is made again when next asked for.
    expect(upper('d')).toBe('D');
    expect(['d', 'a'].map(upper)).toEqual(['D', 'A']);
    expect(made).toEqual(['a', 'b', 'c', 'd', 'a']);
  });
});
