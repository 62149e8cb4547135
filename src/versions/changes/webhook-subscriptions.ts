/**
 * Version 2026-12-15: a webhook endpoint may subscribe to some task events only, by `filter` (a
 * TaskFilter the task matches before or after the change) and `fields` (a `task.updated` is sent
 * only when one of them changed). Version 2026-11-28 has neither: they are absent from its
 * endpoints, and sending one is refused by its document (a 400 naming the field). An endpoint
 * kept in 2026-11-28 has neither (webhook-endpoints-repository.ts refuses the move otherwise).
 */
import {
  eachEndpointOfAnswer,
  eachExampleObject,
  isObject,
  objectAt,
  removeProperty,
  type JsonObject,
  type VersionChange,
} from '../change';

const properties = ['filter', 'fields'];
const endpointSchemas = [
  'WebhookEndpoint',
  'WebhookEndpointWithSecret',
  'WebhookEndpointCreate',
  'WebhookEndpointUpdate',
];
const schemas = ['TaskField', 'WebhookTaskFilter', 'WebhookTaskFields'];
/** The request examples that show nothing but a subscription, by operation. */
const requestExamples: Record<string, string[]> = {
  createWebhookEndpoint: ['someTasks'],
  updateWebhookEndpoint: ['statusChanges', 'everyTaskEvent'],
};

function endpointDown(endpoint: JsonObject): void {
  for (const property of properties) delete endpoint[property];
}

/** The operation with this id, wherever it is in `paths`. */
function operationOf(document: JsonObject, operationId: string): JsonObject {
  for (const item of Object.values(objectAt(document, '/paths')))
    for (const operation of Object.values(item as JsonObject))
      if ((operation as JsonObject | null)?.operationId === operationId)
        return operation as JsonObject;
  throw new Error(`no operation ${operationId}`);
}

export const webhookSubscriptions: VersionChange = {
  sentence:
    'A webhook endpoint may carry `filter` (a task event is sent only when its task matches it before or after the change) and `fields` (a `task.updated` event is sent only when one of these fields changed); project events ignore both. Earlier versions neither show nor take them.',

  document(newer) {
    for (const schema of endpointSchemas)
      for (const property of properties)
        removeProperty(newer, `/components/schemas/${schema}`, property);
    const components = objectAt(newer, '/components/schemas');
    for (const schema of schemas) {
      if (components[schema] === undefined) throw new Error(`no schema ${schema}`);
      delete components[schema];
    }
    for (const [operationId, names] of Object.entries(requestExamples)) {
      const contents = Object.values(
        objectAt(operationOf(newer, operationId), '/requestBody/content'),
      ) as JsonObject[];
      for (const name of names) {
        const holding = contents.filter(
          (content) => isObject(content.examples) && name in content.examples,
        );
        if (holding.length === 0) throw new Error(`${operationId} has no example ${name}`);
        for (const content of holding) delete (content.examples as JsonObject)[name];
      }
    }
    eachExampleObject(newer, (object) => {
      if ('webhook_endpoint_id' in object || 'url' in object) endpointDown(object);
    });
    return newer;
  },

  answer(newer) {
    eachEndpointOfAnswer(newer, endpointDown);
    return newer;
  },
};
