/**
 * What an answer given in a deprecated API version carries (API_VERSIONS_DEPRECATED):
 * `Deprecation` (RFC 9745: since when, the day the next version was released), `Sunset` (RFC
 * 8594) once a date is set, and a `Link` to the versions and what each changed.
 */
import { versions } from '../versions/versions';

export type DeprecatedVersions = ReadonlyMap<string, string | undefined>;

const midnight = (day: string) => new Date(`${day}T00:00:00Z`);

/** The headers of each deprecated version's answers, by version; none for the others. */
export function deprecationHeaders(
  deprecated: DeprecatedVersions,
): ReadonlyMap<string, Record<string, string>> {
  const headers = new Map<string, Record<string, string>>();
  for (const [version, sunset] of deprecated) {
    const index = versions.findIndex((entry) => entry.version === version);
    if (index < 1) continue; // the newest, or none: the configuration refuses both
    const since = midnight(versions[index - 1].releasedOn).getTime() / 1000;
    headers.set(version, {
      Deprecation: `@${since}`,
      ...(sunset === undefined ? {} : { Sunset: midnight(sunset).toUTCString() }),
      Link: '</versions>; rel="deprecation"; type="application/json"',
    });
  }
  return headers;
}
