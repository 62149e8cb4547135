/**
 * Version 2026-12-15: a webhook endpoint has an `api_version`, the version its deliveries are
 * given in, set from the version of the request that made it and changed with PATCH. Version
 * 2026-11-28 has no such field; its endpoints (every one made before versions, and those made in
 * it) receive their deliveries in 2026-11-28.
 */
import {
  eachExampleObject,
  objectAt,
  removeProperty,
  type Json,
  type JsonObject,
  type VersionChange,
} from '../change';

const endpointSchemas = ['WebhookEndpoint', 'WebhookEndpointWithSecret', 'WebhookEndpointUpdate'];

function endpointDown(endpoint: Json | undefined): void {
  if (endpoint !== null && typeof endpoint === 'object' && !Array.isArray(endpoint))
    delete endpoint.api_version;
}

/** The operations whose answers carry endpoints, and where. */
const endpointsIn: Record<string, (body: JsonObject) => void> = {
  createWebhookEndpoint: endpointDown,
  getWebhookEndpoint: endpointDown,
  updateWebhookEndpoint: endpointDown,
  listWebhookEndpoints: (page) => (page.data as Json[] | undefined)?.forEach(endpointDown),
};

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
    const body = newer.body;
    if (body !== null && typeof body === 'object' && !Array.isArray(body) && newer.status < 300)
      endpointsIn[newer.operationId]?.(body);
    return newer;
  },
};
