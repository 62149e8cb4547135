import { createHash } from 'node:crypto';
import { fingerprint } from '../../src/app/request-fingerprint';
import { versionBeforeVersions } from '../../src/versions/versions';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

it('prints a request of the version before versions as keys were bound before versions, so they still replay', () => {
  expect(fingerprint('createProject', { name: 'a', description: 'b' })).toBe(
    sha256('createProject\n{"description":"b","name":"a"}'),
  );
  expect(fingerprint('createProject', { name: 'a' }, {}, versionBeforeVersions)).toBe(
    sha256('createProject\n{"name":"a"}'),
  );
});

it('binds a key to the API version: the same request in another version is another request', () => {
  const body = { project_id: 'p', title: 't' };
  const before = fingerprint('createTask', body, {}, versionBeforeVersions);
  const later = fingerprint('createTask', body, {}, '2099-01-01');
  expect(later).not.toBe(before);
  expect(fingerprint('createTask', { title: 't', project_id: 'p' }, {}, '2099-01-01')).toBe(later);
  expect(later).toBe(sha256('2099-01-01\ncreateTask\n{"project_id":"p","title":"t"}'));
});
