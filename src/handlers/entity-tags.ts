/**
 * ETags are the resource's version, quoted: `"3"`. A client sends them back in If-Match (to
 * change only what it has seen) and If-None-Match (to skip a body it already has).
 */
import type { VersionCondition } from '../db/versioned';
import { InvalidParameterError } from '../errors';

export function entityTag(version: number): string {
  return `"${version}"`;
}

/** RFC 9110's entity-tag: an optional `W/`, then any visible characters but `"` (or obs-text), quoted. */
const tag = '(?:W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"';
/** `*`, or a list of one or more entity tags; a list may hold empty elements, which RFC 9110 has recipients ignore. */
const anyTag = /^[ \t]*\*[ \t]*$/;
const tagList = new RegExp(
  `^[ \\t]*(?:,[ \\t]*)*${tag}(?:[ \\t]*,(?:[ \\t]*,)*[ \\t]*${tag})*(?:[ \\t]*,)*[ \\t]*$`,
);

/**
 * Refuses an If-Match or If-None-Match that is neither `*` nor a list of quoted entity tags
 * (`If-Match: 2`): compared as it is, it would never match and read as "the resource changed".
 */
export function refuseMalformedConditions(headers: Record<string, string | undefined>): void {
  for (const name of ['If-Match', 'If-None-Match']) {
    const value = headers[name];
    if (value !== undefined && !anyTag.test(value) && !tagList.test(value)) {
      throw new InvalidParameterError(
        'header',
        name,
        'must be * or a comma-separated list of quoted entity tags, such as "3" or W/"3"',
      );
    }
  }
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
