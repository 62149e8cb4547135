import { generateApiKey, hashApiKey, type ApiKeyScope } from '../api-key-format';
import type { Repositories } from '../all-repositories';
import type { ApiVersion } from '../versions/versions';

/**
 * Makes a key for the tenant (created on first use) and stores its hash; the key itself is
 * returned once. The key answers in its tenant's version unless `apiVersion` pins it to another.
 */
export async function issueApiKey(
  repositories: Repositories,
  tenantName: string,
  scopes: ApiKeyScope[],
  expiresAt?: Date,
  apiVersion?: ApiVersion,
) {
  const key = generateApiKey();
  const tenant = await repositories.tenants.findOrCreate(tenantName);
  const keyId = await repositories.apiKeys.insert(tenant.tenant_id, hashApiKey(key), scopes, {
    expiresAt,
    apiVersion,
  });
  return { key, keyId, tenant: tenant.name };
}
