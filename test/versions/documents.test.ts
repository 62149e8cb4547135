import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import {
  removeEnumValue,
  removeProperty,
  type JsonObject,
  type VersionChange,
} from '../../src/versions/change';
import {
  documentFor,
  madeDocumentsFolder,
  staleMadeDocuments,
  writeMadeDocuments,
} from '../../src/versions/documents';
import { answerDown, eventDown, requestUp } from '../../src/versions/migrate';
import type { SupportedVersion } from '../../src/versions/versions';

/** A change that leaves its name in the document, the request, the answer and the event. */
function marker(name: string): VersionChange {
  const mark = (value: any) => ({ ...value, marks: [...(value.marks ?? []), name] });
  return {
    sentence: `change ${name}`,
    document: (newer) => ({
      ...newer,
      'x-undone': [...((newer['x-undone'] as string[]) ?? []), name],
    }),
    request: (older) => ({ ...older, body: mark(older.body) }),
    answer: (newer) => ({ ...newer, body: mark(newer.body) }),
    event: mark,
  };
}

/** The cancelled task of 2026-12-15, as its module will undo it, on a small document. */
const cancelled: VersionChange = {
  sentence: 'A task can be cancelled.',
  document(newer) {
    removeEnumValue(newer, '/components/schemas/TaskStatus', 'cancelled');
    removeProperty(newer, '/components/schemas/Task', 'completed_at');
    return newer;
  },
};

const registry: SupportedVersion[] = [
  {
    version: '2027-02-01',
    releasedOn: '2027-02-01',
    status: 'supported',
    changes: [marker('3a'), marker('3b')],
  },
  {
    version: '2027-01-01',
    releasedOn: '2027-01-01',
    status: 'supported',
    changes: [marker('2'), cancelled],
  },
  { version: '2026-11-28', releasedOn: '2026-11-28', status: 'deprecated', changes: [] },
];

function newest(): JsonObject {
  return {
    openapi: '3.0.3',
    info: { title: 'Tasks', version: '2.0.0' },
    paths: {},
    components: {
      schemas: {
        TaskStatus: { type: 'string', enum: ['pending', 'done', 'cancelled'] },
        Task: {
          type: 'object',
          required: ['task_id', 'completed_at'],
          properties: {
            task_id: { type: 'string' },
            completed_at: { type: 'string', nullable: true },
          },
        },
      },
    },
  };
}

describe('documentFor', () => {
  it('undoes only the changes newer than the version, newest first, in each version its list order', () => {
    expect(documentFor('2027-02-01', newest(), registry)['x-undone']).toBeUndefined();
    expect(documentFor('2027-01-01', newest(), registry)['x-undone']).toEqual(['3a', '3b']);
    expect(documentFor('2026-11-28', newest(), registry)['x-undone']).toEqual(['3a', '3b', '2']);
  });

  it("sets info.version to the version's date and leaves the newest document as it was", () => {
    const document = newest();
    const older = documentFor('2026-11-28', document, registry) as any;
    expect(older.info).toEqual({ title: 'Tasks', version: '2026-11-28' });
    expect(older.components.schemas.TaskStatus.enum).toEqual(['pending', 'done']);
    expect(older.components.schemas.Task.required).toEqual(['task_id']);
    expect(older.components.schemas.Task.properties.completed_at).toBeUndefined();
    expect(document).toEqual(newest());
    expect(documentFor('2027-02-01', document, registry).info).toEqual({
      title: 'Tasks',
      version: '2027-02-01',
    });
  });

  it('names the version as the one value of the Api-Version header, in the request and the answer', () => {
    const header = () => ({ schema: { type: 'string', enum: ['2027-02-01'] } });
    const document = newest() as any;
    document.components.parameters = {
      ApiVersion: { name: 'Api-Version', in: 'header', ...header() },
    };
    document.components.headers = { ApiVersion: header() };
    const older = documentFor('2026-11-28', document, registry) as any;
    expect(older.components.parameters.ApiVersion.schema.enum).toEqual(['2026-11-28']);
    expect(older.components.headers.ApiVersion.schema.enum).toEqual(['2026-11-28']);
    expect(document.components.headers.ApiVersion.schema.enum).toEqual(['2027-02-01']);
  });

  it('fails on an unknown version, and a change whose document no longer fits fails loudly', () => {
    expect(() => documentFor('2020-01-01', newest(), registry)).toThrow(
      '2020-01-01 is not a supported version',
    );
    const without = newest() as any;
    without.components.schemas.TaskStatus.enum = ['pending', 'done'];
    expect(() => documentFor('2026-11-28', without, registry)).toThrow(
      '/components/schemas/TaskStatus has no enum value cancelled',
    );
    delete without.components.schemas.Task;
    expect(() => removeProperty(without, '/components/schemas/Task', 'x')).toThrow(
      'no object at /components/schemas/Task',
    );
  });
});

describe('the made documents on disk', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'versions-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('writes every version but the newest, then finds them up to date', () => {
    expect(staleMadeDocuments(newest(), registry, root)).toEqual([
      { file: `${madeDocumentsFolder}/2027-01-01.yaml`, problem: 'missing' },
      { file: `${madeDocumentsFolder}/2026-11-28.yaml`, problem: 'missing' },
    ]);
    expect(writeMadeDocuments(newest(), registry, root)).toEqual([
      'openapi/versions/2027-01-01.yaml',
      'openapi/versions/2026-11-28.yaml',
    ]);
    expect(fs.readdirSync(path.join(root, 'openapi/versions')).sort()).toEqual([
      '2026-11-28.yaml',
      '2027-01-01.yaml',
    ]);
    const text = fs.readFileSync(path.join(root, 'openapi/versions/2026-11-28.yaml'), 'utf8');
    expect(text).toMatch(/^# Made by `npm run -s versions -- write`/);
    expect(YAML.parse(text)).toEqual(documentFor('2026-11-28', newest(), registry));
    expect(staleMadeDocuments(newest(), registry, root)).toEqual([]);
    expect(writeMadeDocuments(newest(), registry, root)).toEqual([]);
  });

  it('finds a document stale when the newest changes, and one of no supported version', () => {
    writeMadeDocuments(newest(), registry, root);
    const changed = newest() as any;
    changed.components.schemas.Task.properties.title = { type: 'string' };
    fs.writeFileSync(path.join(root, 'openapi/versions/2020-01-01.yaml'), 'openapi: 3.0.3\n');
    expect(staleMadeDocuments(changed, registry, root)).toEqual([
      { file: 'openapi/versions/2027-01-01.yaml', problem: 'stale' },
      { file: 'openapi/versions/2026-11-28.yaml', problem: 'stale' },
      { file: 'openapi/versions/2020-01-01.yaml', problem: 'not a supported version' },
    ]);
    writeMadeDocuments(changed, registry, root);
    expect(staleMadeDocuments(changed, registry, root)).toEqual([]);
    expect(fs.existsSync(path.join(root, 'openapi/versions/2020-01-01.yaml'))).toBe(false);
  });

  it('writes nothing while there is one version', () => {
    expect(writeMadeDocuments(newest(), registry.slice(2), root)).toEqual([]);
    expect(fs.existsSync(path.join(root, 'openapi/versions'))).toBe(false);
  });
});

describe('requests, answers and events', () => {
  it('brings a request up oldest change first, an answer and an event down newest first', () => {
    const request = { operationId: 'createTask', query: {}, body: { title: 't' } };
    expect(requestUp('2026-11-28', request, registry).body).toEqual({
      title: 't',
      marks: ['2', '3b', '3a'],
    });
    expect(requestUp('2027-01-01', request, registry).body).toEqual({
      title: 't',
      marks: ['3b', '3a'],
    });
    expect(requestUp('2027-02-01', request, registry)).toEqual(request);
    expect(request.body).toEqual({ title: 't' });

    const answer = { operationId: 'getTask', status: 200, body: { task_id: 'a' } };
    expect(answerDown('2026-11-28', answer, registry).body).toEqual({
      task_id: 'a',
      marks: ['3a', '3b', '2'],
    });
    expect(answerDown('2027-02-01', answer, registry)).toEqual(answer);

    const event = { event_id: 'e', type: 'task.updated', data: {} };
    expect(eventDown('2027-01-01', event, registry)).toEqual({ ...event, marks: ['3a', '3b'] });
    expect(eventDown('2027-02-01', event, registry)).toEqual(event);
  });
});
