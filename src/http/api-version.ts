/**
 * The version a request is answered in (issue 45): its `Api-Version` header when it sends one,
 * else its key's (its tenant's pin, or the key's own). Checked once the key is known and before
 * the body is read: a header naming anything but exactly one supported version is a 400 that
 * lists them.
 */
import { supportedVersions, type ApiVersion } from '../versions/versions';
import { ProblemError } from '../errors';

export function requestedVersion(
  header: string | undefined,
  keyVersion: ApiVersion,
  versions: readonly ApiVersion[] = supportedVersions,
): ApiVersion {
  if (header === undefined) return keyVersion;
  if (versions.includes(header)) return header;
  const supported = `the supported versions are ${versions.join(', ')}`;
  const named = JSON.stringify(header.slice(0, 40));
  const detail =
    header.trim() === ''
      ? `Api-Version is empty; ${supported}, or send none to be answered in your key's, ${keyVersion}.`
      : header.includes(',')
        ? `Api-Version names several versions (${named}); send one: ${supported}.`
        : /^\d{4}-\d{2}-\d{2}$/.test(header)
          ? `Api-Version ${named} is not a version of this API; ${supported}.`
          : `Api-Version ${named} is not a date, YYYY-MM-DD; ${supported}.`;
  throw new ProblemError('unsupported-api-version', detail);
}
