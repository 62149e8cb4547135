import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { projectRoot } from '../../src/paths';
import {
  allowListFile,
  parseAllowList,
  type AllowedDifference,
} from '../../src/versions/allowed-differences';
import { removeEnumValue, type JsonObject } from '../../src/versions/change';
import { runGate } from '../../src/versions/gate';
import type { SupportedVersion } from '../../src/versions/versions';

const read = (file: string) =>
  YAML.parse(fs.readFileSync(path.join(projectRoot, file), 'utf8')) as JsonObject;

describe('the allow-list', () => {
  const released = (): JsonObject => ({
    openapi: '3.0.3',
    info: { title: 't', version: '1.0.0' },
    components: { schemas: { State: { type: 'string', enum: ['open', 'shut'] } } },
  });
  const registry: SupportedVersion[] = [
    {
      version: '2027-01-01',
      releasedOn: '2027-01-01',
      status: 'supported',
      changes: [
        {
          sentence: 'A state can be lost.',
          document: (newer) => (removeEnumValue(newer, '/components/schemas/State', 'lost'), newer),
        },
      ],
    },
    {
      version: '2026-11-28',
      releasedOn: '2026-11-28',
      status: 'supported',
      changes: [],
      released: 'r.yaml',
    },
  ];
  const newest = () => {
    const document = released() as any;
    document.components.schemas.State.enum.push('lost');
    document.components.schemas.State.pattern = '^[a-z]+$';
    return document as JsonObject;
  };
  const entry: AllowedDifference = {
    version: '2026-11-28',
    pointer: '/components/schemas/State/pattern',
    kind: 'added',
    reason: 'The service already refused other states.',
  };

  it('lets a listed difference pass and fails an unlisted one', () => {
    expect(runGate(newest(), [entry], released, registry)).toEqual({
      compared: [{ version: '2026-11-28', released: 'r.yaml' }],
      unexplained: [],
      staleEntries: [],
    });
    expect(runGate(newest(), [], released, registry).unexplained).toEqual([
      {
        version: '2026-11-28',
        difference: {
          pointer: '/components/schemas/State/pattern',
          kind: 'added',
          after: '^[a-z]+$',
        },
      },
    ]);
    // The same place, another kind or another version: not what the entry allows.
    for (const other of [
      { ...entry, kind: 'changed' as const },
      { ...entry, version: '2027-01-01' },
    ])
      expect(runGate(newest(), [other], released, registry).unexplained).toHaveLength(1);
  });

  it('fails a stale entry, one that matches no difference', () => {
    const stale = { ...entry, pointer: '/components/schemas/State/maxLength' };
    const result = runGate(newest(), [entry, stale], released, registry);
    expect(result.unexplained).toEqual([]);
    expect(result.staleEntries).toEqual([stale]);
  });

  it('reads entries and refuses malformed or repeated ones', () => {
    const text = YAML.stringify({ differences: [entry] });
    expect(parseAllowList(text)).toEqual([entry]);
    expect(parseAllowList('differences: []\n')).toEqual([]);
    const bad = YAML.stringify({
      differences: [
        { ...entry, kind: 'moved' },
        { ...entry, reason: '' },
        { ...entry, pointer: 'components' },
        { ...entry, why: 'x' },
        entry,
        entry,
      ],
    });
    expect(() => parseAllowList(bad)).toThrow(
      [
        `${allowListFile}:`,
        '  entry 1: kind is not one of added, removed, changed',
        '  entry 2: reason missing or not a string',
        '  entry 3: pointer does not start with /',
        '  entry 4: unknown field(s) why',
        '  entry 6: 2026-11-28 added /components/schemas/State/pattern is listed twice',
      ].join('\n'),
    );
  });
});

describe('the gate on the real documents', () => {
  const newest = () => read('openapi/openapi.yaml');
  const allowList = () =>
    parseAllowList(fs.readFileSync(path.join(projectRoot, allowListFile), 'utf8'));
  const gate = (document: JsonObject) => runGate(document, allowList(), read);
  const found = (document: JsonObject) =>
    gate(document)
      .unexplained.map(
        ({ version, difference: { kind, pointer } }) => `${version} ${kind} ${pointer}`,
      )
      .sort();
  /**
   * What the gate finds in a changed copy of the real document: exactly what it found before
   * (nothing, once the test above passes) and `expected`, so each change below is seen on its own.
   */
  const expectFound = (document: JsonObject, expected: string[]) =>
    expect(found(document)).toEqual([...found(newest()), ...expected].sort());

  it('passes: 2026-11-28 is released document 1.5.0, but for the allowed differences', () => {
    const result = gate(newest());
    expect(result.compared).toEqual([
      { version: '2026-11-28', released: 'openapi/released/1.5.0.yaml' },
    ]);
    expect(result.unexplained).toEqual([]);
    expect(result.staleEntries).toEqual([]);
  });

  it('fails on a property added to a response schema', () => {
    const document = newest() as any;
    // A field of no change module (due_on, which this test once added, now has one).
    document.components.schemas.Task.properties.estimate = { type: 'integer', nullable: true };
    expectFound(document, ['2026-11-28 added /components/schemas/Task/properties/estimate']);
  });

  it('fails on an enum value removed or added', () => {
    const removed = newest() as any;
    removed.components.schemas.TaskStatus.enum = ['pending', 'done', 'cancelled'];
    expectFound(removed, ['2026-11-28 removed /components/schemas/TaskStatus/enum/1']);
    const added = newest() as any;
    added.components.schemas.TaskStatus.enum.push('blocked');
    expectFound(added, ['2026-11-28 added /components/schemas/TaskStatus/enum/3']);
  });

  it('fails on a request field made required', () => {
    const document = newest() as any;
    document.components.schemas.TaskCreate.required.push('description');
    expectFound(document, ['2026-11-28 added /components/schemas/TaskCreate/required/2']);
  });

  it('ignores prose: a description and an example changed', () => {
    const document = newest() as any;
    document.components.schemas.TaskStatus.description = 'Where a task stands.';
    document.components.schemas.Task.example.title = 'Another';
    document.info.description = 'Shorter.';
    expectFound(document, []);
  });
});
