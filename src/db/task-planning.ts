/**
 * A task's planning fields (version 2026-12-15) as the rows hold them: the priority as its rank,
 * so that it sorts in its order, and labels as a set in which two labels are the same when their
 * case folds are equal.
 */
import type { components } from '../../generated/api';

type TaskPriority = components['schemas']['TaskPriority'];

/** The priorities in their order: a priority's rank is its index. */
export const priorities: readonly TaskPriority[] = ['none', 'low', 'medium', 'high', 'urgent'];

export const priorityRank = (priority: TaskPriority): number => priorities.indexOf(priority);

export const priorityOfRank = (rank: number): TaskPriority => priorities[rank] ?? 'none';

/**
 * ASCII text, in which a label's fold (below) is lower case alone: ASCII is its own NFC form, and
 * its upper case is ASCII. Asked first, as normalising cost a webhook filter a label's fold of
 * every event.
 */
export const asciiOnly = /^[\x00-\x7f]*$/;

/**
 * A label's Unicode case fold, of its NFC normalisation: `é` typed as one character or as `e` and
 * a combining accent is one label (and one word of a TaskFilter's `text`). JavaScript has no case
 * folding of its own; upper then lower case gives full folding's answers for the letters where
 * lower case alone does not (ß and ss, ς and σ, ﬁ and fi). What matters is that equal labels get
 * one fold, the same every time. Case mapping never makes a string shorter, so a fold has at
 * least as many code points as its label's NFC form.
 */
export const labelFold = (label: string): string =>
  asciiOnly.test(label) ? label.toLowerCase() : label.normalize('NFC').toUpperCase().toLowerCase();

/**
 * The set a request names, sorted by fold: a label named twice (in any case) counts once, and a
 * label the task already has keeps the spelling it was first given.
 */
export function labelSet(named: readonly string[], had: readonly string[] = []): string[] {
  const spelling = new Map<string, string>();
  for (const label of had) spelling.set(labelFold(label), label);
  const set = new Map<string, string>();
  for (const label of named) {
    const fold = labelFold(label);
    if (!set.has(fold)) set.set(fold, spelling.get(fold) ?? label);
  }
  return [...set.keys()].sort(byCodePoint).map((fold) => set.get(fold) as string);
}

/** The same order in every process: as JavaScript compares strings (by UTF-16 unit), not by locale. */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
