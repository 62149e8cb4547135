/**
 * ETags are the resource's version, quoted: `"3"`. A client sends them back in If-Match (to
 * change only what it has seen) and If-None-Match (to skip a body it already has). What is not
 * `*` or a list of entity tags never gets here: the document's `EntityTagList` pattern refuses
 * it (`If-Match: 2`, compared as it is, would never match and read as "the resource changed").
 */
import type { VersionCondition } from '../db/versioned';

export function entityTag(version: number): string {
  return `"${version}"`;
}

function tagsIn(header: string): string[] {
  return header.split(',').map((tag) => tag.trim());
}

/**
 * The versions an If-Match header accepts, by strong comparison (a weak tag never matches);
 * undefined, meaning any, when there is no header or it is `*`.
 */
export function versionsAccepted(ifMatch: string | undefined): VersionCondition {
  if (ifMatch === undefined || ifMatch.trim() === '*') return undefined;
  return tagsIn(ifMatch).flatMap((tag) => {
    const match = /^"(\d{1,15})"$/.exec(tag);
    return match ? [Number(match[1])] : [];
  });
}

/** Whether If-None-Match names this version, by weak comparison. */
export function stillCurrent(ifNoneMatch: string | undefined, version: number): boolean {
  if (ifNoneMatch === undefined) return false;
  const current = entityTag(version);
  return (
    ifNoneMatch.trim() === '*' ||
    tagsIn(ifNoneMatch).some((tag) => tag.replace(/^W\//, '') === current)
  );
}
