/**
 * Version 2026-12-15: a webhook endpoint has an `api_version`, the version its deliveries are
 * given in, set from the version of the request that made it and changed with PATCH. Version
 * 2026-11-28 has no such field; its endpoints (every one made before versions, and those made in
 * it) receive their deliveries in 2026-11-28.
 */
import {
  eachEndpointOfAnswer,
  eachExampleObject,
  objectAt,
  removeProperty,
  type JsonObject,
  type VersionChange,
} from '../change';

const endpointSchemas = ['WebhookEndpoint', 'WebhookEndpointWithSecret', 'WebhookEndpointUpdate'];

function endpointDown(endpoint: JsonObject): void {
  delete endpoint.api_version;
}

export const webhookEndpointVersions: VersionChange = {
  sentence:
    'A webhook endpoint has `api_version`, the version its deliveries are given in (each with an `Api-Version` header): the version of the request that made it, changed with `PATCH`; endpoints made in earlier versions receive theirs in the version they were made in.',

  document(newer) {
    for (const name of endpointSchemas)
      removeProperty(newer, `/components/schemas/${name}`, 'api_version');
    delete objectAt(newer, '/components/schemas').ApiVersion;
    eachExampleObject(newer, (object) => {
      if ('webhook_endpoint_id' in object) endpointDown(object);
    });
    return newer;
  },

  answer(newer) {
    eachEndpointOfAnswer(newer, endpointDown);
    return newer;
  },
};
