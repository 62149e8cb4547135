import { diffDocuments, formatDifference, withoutProse } from '../../src/versions/document-diff';

/** A small document; each test changes a copy of it. */
function document(): Record<string, any> {
  return {
    openapi: '3.0.3',
    info: { title: 'Things', version: '1.0.0', description: 'All about things.' },
    tags: [{ name: 'Things', description: 'Them.' }],
    paths: {
      '/v1/things/{id}': {
        parameters: [{ $ref: '#/components/parameters/Id' }],
        get: {
          operationId: 'getThing',
          summary: 'Get a thing',
          tags: ['Things'],
          parameters: [
            { name: 'fields', in: 'query', description: 'Which.', schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'The thing.',
              headers: { ETag: { $ref: '#/components/headers/ETag' } },
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/Thing' },
                  examples: { one: { value: { id: 'a' } } },
                },
              },
            },
          },
        },
      },
    },
    components: {
      parameters: {
        Id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      },
      headers: { ETag: { description: 'The version.', schema: { type: 'string' } } },
      schemas: {
        State: { type: 'string', enum: ['open', 'closed'], example: 'open' },
        Thing: {
          type: 'object',
          title: 'A thing',
          required: ['id', 'state'],
          properties: {
            id: { type: 'string', description: 'Its id.' },
            state: { $ref: '#/components/schemas/State' },
            // Properties named like prose keys are fields, not prose.
            description: { type: 'string', nullable: true },
            title: { type: 'string' },
          },
        },
      },
    },
  };
}

const thing = '/components/schemas/Thing';
const getThing = '/paths/~1v1~1things~1{id}/get';

it('finds nothing between a document and itself', () => {
  expect(diffDocuments(document(), document())).toEqual([]);
});

it('leaves prose out: descriptions, summaries, titles, examples, tags, info', () => {
  const made = document();
  made.info = { title: 'Other', version: '2026-11-28' };
  made.tags = [];
  made.paths['/v1/things/{id}'].get.summary = 'Fetch';
  made.paths['/v1/things/{id}'].get.tags = ['Other'];
  made.paths['/v1/things/{id}'].get.parameters[0].description = 'Which fields.';
  made.paths['/v1/things/{id}'].get.responses['200'].content['application/json'].examples = {};
  made.components.schemas.Thing.title = 'Something';
  made.components.schemas.Thing.properties.id.description = 'The id.';
  made.components.schemas.State.example = 'closed';
  made.components.examples = { x: { value: 1 } };
  made.externalDocs = { url: 'https://example.com' };
  expect(diffDocuments(document(), made)).toEqual([]);
});

it('keeps fields named like prose keys', () => {
  const stripped = withoutProse(document()) as any;
  expect(Object.keys(stripped.components.schemas.Thing.properties)).toEqual([
    'id',
    'state',
    'description',
    'title',
  ]);
  const made = document();
  delete made.components.schemas.Thing.properties.description;
  expect(diffDocuments(document(), made)).toEqual([
    {
      pointer: `${thing}/properties/description`,
      kind: 'removed',
      before: { type: 'string', nullable: true },
    },
  ]);
});

it('finds a property added to a response schema, at its place in the made document', () => {
  const made = document();
  made.components.schemas.Thing.properties.size = { type: 'integer' };
  expect(diffDocuments(document(), made)).toEqual([
    { pointer: `${thing}/properties/size`, kind: 'added', after: { type: 'integer' } },
  ]);
});

it('finds enum values added and removed, wherever they stand', () => {
  const made = document();
  made.components.schemas.State.enum = ['closed', 'archived'];
  expect(diffDocuments(document(), made)).toEqual([
    { pointer: '/components/schemas/State/enum/0', kind: 'removed', before: 'open' },
    { pointer: '/components/schemas/State/enum/1', kind: 'added', after: 'archived' },
  ]);
  const reordered = document();
  reordered.components.schemas.State.enum = ['closed', 'open'];
  expect(diffDocuments(document(), reordered)).toEqual([]);
});

it('finds a required field, a type, a nullable', () => {
  const made = document();
  made.components.schemas.Thing.required.push('title');
  made.components.schemas.Thing.properties.id.type = 'integer';
  made.components.schemas.Thing.properties.title.nullable = true;
  expect(diffDocuments(document(), made).map(formatDifference)).toEqual([
    `added ${thing}/required/2: "title"`,
    `changed ${thing}/properties/id/type: "string" -> "integer"`,
    `added ${thing}/properties/title/nullable: true`,
  ]);
});

it('finds a new response status, a new header and a new parameter', () => {
  const made = document();
  const get = made.paths['/v1/things/{id}'].get;
  get.responses['404'] = { description: 'No such thing.' };
  get.responses['200'].headers['Api-Version'] = { schema: { type: 'string' } };
  get.parameters.unshift({ name: 'expand', in: 'query', schema: { type: 'boolean' } });
  expect(diffDocuments(document(), made).map(({ pointer, kind }) => `${kind} ${pointer}`)).toEqual([
    `added ${getThing}/parameters/0`,
    `added ${getThing}/responses/200/headers/Api-Version`,
    `added ${getThing}/responses/404`,
  ]);
});

it('finds a parameter changed, at its place, whatever its position', () => {
  const made = document();
  const get = made.paths['/v1/things/{id}'].get;
  get.parameters.unshift({ name: 'expand', in: 'query', schema: { type: 'boolean' } });
  get.parameters[1].required = true;
  expect(diffDocuments(document(), made)).toContainEqual({
    pointer: `${getThing}/parameters/1/required`,
    kind: 'added',
    after: true,
  });
});

it('compares $refs as written: a change in a target is found at the target, once', () => {
  const made = document();
  made.components.headers.ETag.schema.pattern = '^"';
  made.components.parameters.Id.schema.maxLength = 36;
  expect(diffDocuments(document(), made).map(({ pointer }) => pointer)).toEqual([
    '/components/parameters/Id/schema/maxLength',
    '/components/headers/ETag/schema/pattern',
  ]);
});

it('finds a reference pointed elsewhere, or made inline, as one change', () => {
  const made = document();
  made.components.schemas.Thing.properties.state = { type: 'string' };
  made.paths['/v1/things/{id}'].get.responses['200'].headers.ETag.$ref = '#/components/headers/X';
  expect(diffDocuments(document(), made)).toEqual([
    {
      pointer: `${getThing}/responses/200/headers/ETag`,
      kind: 'changed',
      before: { $ref: '#/components/headers/ETag' },
      after: { $ref: '#/components/headers/X' },
    },
    {
      pointer: `${thing}/properties/state`,
      kind: 'changed',
      before: { $ref: '#/components/schemas/State' },
      after: { type: 'string' },
    },
  ]);
});

it('escapes keys in pointers and shortens long values', () => {
  const made = document();
  made.paths['/v1/a~b'] = { get: { operationId: 'x'.repeat(200), responses: {} } };
  const [difference] = diffDocuments(document(), made);
  expect(difference.pointer).toBe('/paths/~1v1~1a~0b');
  expect(formatDifference(difference).length).toBeLessThan(120);
  expect(formatDifference(difference)).toMatch(/…$/);
});
