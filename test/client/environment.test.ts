/**
 * `createClient()` without `baseUrl` or `apiKey` takes them from TASK_TRACKER_URL and
 * TASK_TRACKER_API_KEY, as the kit's CLI does, an option winning over its variable and an empty
 * variable counting as unset; with neither it throws, naming both. Where there is no `process`
 * (a browser) it reads nothing and names the option alone.
 */
import { createClient } from '@task-tracker/client';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('environment');
});
afterAll(() => api.stop());

const names = ['TASK_TRACKER_URL', 'TASK_TRACKER_API_KEY'] as const;
const saved = names.map((name) => process.env[name]);
afterEach(() =>
  names.forEach((name, i) => {
    if (saved[i] === undefined) delete process.env[name];
    else process.env[name] = saved[i];
  }),
);
const setEnvironment = (url: string | undefined, apiKey: string | undefined) => {
  for (const [name, value] of [
    ['TASK_TRACKER_URL', url],
    ['TASK_TRACKER_API_KEY', apiKey],
  ] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
};

it('takes the URL and the key from the environment when not given', async () => {
  setEnvironment(api.baseUrl, key);
  const project = await createClient().projects.create({ name: 'from the environment' });
  expect(project.name).toBe('from the environment');
});

it('takes the options over the environment', async () => {
  setEnvironment('http://127.0.0.1:9', 'tt_not_a_key');
  const tt = createClient({ baseUrl: api.baseUrl, apiKey: key });
  expect((await tt.projects.create({ name: 'from the options' })).name).toBe('from the options');
  setEnvironment(api.baseUrl, 'tt_not_a_key');
  const withKey = createClient({ apiKey: key });
  expect((await withKey.projects.create({ name: 'key given' })).name).toBe('key given');
});

it('says what is missing when neither an option nor its variable gives it', () => {
  setEnvironment(undefined, key);
  expect(() => createClient()).toThrow(
    new TypeError(
      "createClient needs the service's address: pass baseUrl, or set TASK_TRACKER_URL",
    ),
  );
  setEnvironment(api.baseUrl, '');
  expect(() => createClient()).toThrow(
    new TypeError('createClient needs an API key: pass apiKey, or set TASK_TRACKER_API_KEY'),
  );
  expect(() => createClient({ apiKey: '' })).toThrow(/needs an API key/);
});

it('reads no variable where there is no process, as in a browser', () => {
  setEnvironment(api.baseUrl, key);
  const attempt = (options?: Parameters<typeof createClient>[0]) => {
    try {
      return typeof createClient(options).projects.create;
    } catch (error) {
      return String(error);
    }
  };
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'process')!;
  // Hidden only for these synchronous calls, and asserted on once it is back.
  Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true });
  let made: string[];
  try {
    made = [attempt(), attempt({ baseUrl: api.baseUrl, apiKey: key })];
  } finally {
    Object.defineProperty(globalThis, 'process', descriptor);
  }
  expect(made).toEqual([
    "TypeError: createClient needs the service's address: pass baseUrl (TASK_TRACKER_URL is read in Node only)",
    'function',
  ]);
});
