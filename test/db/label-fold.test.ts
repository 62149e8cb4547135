/**
 * A label's fold (task-planning.ts) takes a shortcut for ASCII labels, lower case alone: it
 * answers as the full fold (NFC, upper case, then lower case) for every ASCII character and for
 * random ASCII labels, and other labels still get the full fold.
 */
import { labelFold } from '../../src/db/task-planning';

const fullFold = (label: string) => label.normalize('NFC').toUpperCase().toLowerCase();

describe('labelFold', () => {
  it('answers as the full fold for every ASCII character and for random ASCII labels', () => {
    const ascii = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));
    const random = Array.from({ length: 2000 }, () =>
      Array.from({ length: 1 + Math.floor(Math.random() * 12) }, () =>
        String.fromCharCode(Math.floor(Math.random() * 128)),
      ).join(''),
    );
    for (const label of ['', ...ascii, ascii.join(''), ...random])
      expect([label, labelFold(label)]).toEqual([label, fullFold(label)]);
  });

  it('folds labels past ASCII in full', () => {
    expect(labelFold('Straße')).toBe('strasse');
    expect(labelFold('cafe\u0301')).toBe(labelFold('Café'));
    expect(labelFold('ﬁx')).toBe('fix');
    expect(labelFold('\u212Aelvin')).toBe('kelvin');
    expect(labelFold('ΣΟΦΟΣ')).toBe(fullFold('σοφος'));
  });
});
