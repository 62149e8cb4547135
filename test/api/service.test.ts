import { newestVersion } from '../../src/versions/versions';
import fs from 'node:fs';
import YAML from 'yaml';
import { openapiDocumentPath } from '../../src/paths';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;

beforeAll(async () => {
  api = await startTestService();
});
afterAll(() => api.stop());

describe('outside /v1, without a key', () => {
  it('GET /healthz says the process is up', async () => {
    const res = await fetch(`${api.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz says the database answers', async () => {
    const res = await fetch(`${api.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready' });
  });

  it('publishes the very document the service runs on, as JSON and as YAML', async () => {
    const source = fs.readFileSync(openapiDocumentPath, 'utf8');
    const yaml = await fetch(`${api.baseUrl}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await yaml.text()).toBe(source);
    const json = await fetch(`${api.baseUrl}/openapi.json`);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    const document = (await json.json()) as { openapi: string; info: { version: string } };
    expect(document).toEqual(YAML.parse(source));
    expect(document.openapi).toBe('3.0.3');
    // Named by its API version's date (contract-decisions, "Published").
    expect(document.info.version).toBe(newestVersion);
  });
});
