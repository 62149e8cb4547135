/**
 * The provider states a pact may name (Pact's `given`), exactly the catalogue of the document's
 * `info.description` and the README. Each sets up its data through the API in the interaction's
 * own tenant and returns the values a pact injects with `fromProviderState`. Parameters the API
 * checks (a status, a name, a URL) are passed on as they are, so a bad one fails the interaction
 * with the API's own problem.
 */
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { TenantApi } from './tenant-api';

type Task = components['schemas']['Task'];
type Project = components['schemas']['Project'];
type EventPage = components['schemas']['EventPage'];
export type StateValues = Record<string, string>;
export type StateParams = Record<string, unknown>;

/** The interaction's tenant, as the states of one interaction build it up. */
export interface InteractionTenant {
  api: TenantApi;
  /** Requests carry a read-only key (`the key can only read`). */
  readOnly: boolean;
  /** Every value the interaction's states returned so far. */
  values: StateValues;
  /** The project and task the states made in this tenant, which message producers change. */
  made: { project_id?: string; task_id?: string };
}

interface ProviderState {
  /** The parameters it takes, all optional, as the catalogue lists them. */
  parameters: string[];
  setUp(tenant: InteractionTenant, params: StateParams): Promise<StateValues>;
}

/** Events of `the feed has events`, and tasks of `a project with tasks exists`, at most. */
const maxCount = 100;
const statusCycle = ['pending', 'in_progress', 'done'] as const;
/**
 * The tasks of `tasks with labels and due dates exist`, in the order they are made, with fixed
 * dates so that a pact's filter finds the same ones on any day; all but the last are assigned.
 */
const plannedTasks = [
  {
    title: 'Fix the login page',
    priority: 'urgent',
    labels: ['bug', 'web'],
    due_on: '2026-11-20',
    status: 'pending',
  },
  {
    title: 'Write the release notes',
    priority: 'high',
    labels: ['docs'],
    due_on: '2026-11-25',
    status: 'in_progress',
  },
  {
    title: 'Plan the next sprint',
    priority: 'medium',
    labels: ['planning'],
    due_on: '2026-12-20',
    status: 'pending',
  },
  { title: 'Tidy the backlog', priority: 'low', status: 'pending', unassigned: true },
];

function countParam(params: StateParams, fallback: number): number {
  const raw = params.count ?? fallback;
  const count = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > maxCount)
    throw new Error(
      `the parameter count must be a whole number from 1 to ${maxCount}, not ${JSON.stringify(raw)}`,
    );
  return count;
}

/** Only the parameters the state takes, and only those given: the API fills in the rest. */
function pick(params: StateParams, names: string[]): Record<string, unknown> {
  return Object.fromEntries(
    names.filter((name) => params[name] !== undefined).map((name) => [name, params[name]]),
  );
}

async function createProject(
  api: TenantApi,
  fields: Record<string, unknown> = {},
): Promise<Project> {
  return (
    await api.call<Project>('POST', '/v1/projects', { name: 'Contract test project', ...fields })
  ).json;
}

/** A task in the status asked for: created `pending`, then moved with a PATCH when it must. */
async function createTask(
  api: TenantApi,
  projectId: string,
  fields: Record<string, unknown>,
): Promise<{ task: Task; etag: string }> {
  const { status, ...rest } = fields;
  let answer = await api.call<Task>('POST', '/v1/tasks', {
    title: 'Contract test task',
    ...rest,
    project_id: projectId,
  });
  if (status !== undefined && status !== 'pending')
    answer = await api.call<Task>('PATCH', `/v1/tasks/${answer.json.task_id}`, { status });
  return { task: answer.json, etag: answer.headers.get('etag') ?? '' };
}

/**
 * The events after `cursor` up to the one recorded by the request `requestId`, waiting for
 * their numbering, and the position after it. Nothing else writes in the tenant meanwhile.
 */
export async function eventsUntil(
  api: TenantApi,
  cursor: string | undefined,
  requestId: string,
): Promise<{ events: EventPage['data']; cursor: string }> {
  const events: EventPage['data'] = [];
  const deadline = Date.now() + 10_000;
  for (;;) {
    const query = new URLSearchParams({ limit: '200', wait: '5', ...(cursor ? { cursor } : {}) });
    const page = (await api.call<EventPage>('GET', `/v1/events?${query}`)).json;
    events.push(...page.data);
    cursor = page.next_cursor;
    if (page.data.some((event) => event.request_id === requestId)) return { events, cursor };
    if (Date.now() > deadline)
      throw new Error(`the feed did not show the event of request ${requestId} within 10 s`);
  }
}

/** The feed's position after every event of the changes made so far, once they are numbered. */
export async function settledCursor(api: TenantApi): Promise<string> {
  if (api.lastChange) return (await eventsUntil(api, undefined, api.lastChange)).cursor;
  return (await api.call<EventPage>('GET', '/v1/events?from=latest')).json.next_cursor;
}

export const providerStates: Record<string, ProviderState> = {
  'a project exists': {
    parameters: ['name', 'description'],
    async setUp({ api, made }, params) {
      const project = await createProject(api, pick(params, ['name', 'description']));
      made.project_id = project.project_id;
      return { project_id: project.project_id };
    },
  },
  'a project with tasks exists': {
    parameters: ['count', 'status'],
    async setUp({ api, made }, params) {
      const count = countParam(params, 3);
      const project = await createProject(api);
      const taskIds: string[] = [];
      for (let i = 0; i < count; i++) {
        const status = params.status ?? statusCycle[i % statusCycle.length];
        const { task } = await createTask(api, project.project_id, {
          title: `Contract test task ${i + 1}`,
          status,
        });
        taskIds.push(task.task_id);
      }
      Object.assign(made, { project_id: project.project_id, task_id: taskIds[0] });
      return { project_id: project.project_id, task_id: taskIds[0] };
    },
  },
  'a task exists': {
    parameters: ['status', 'title', 'description'],
    async setUp({ api, made }, params) {
      const project = await createProject(api);
      const { task, etag } = await createTask(
        api,
        project.project_id,
        pick(params, ['status', 'title', 'description']),
      );
      Object.assign(made, { project_id: project.project_id, task_id: task.task_id });
      return { project_id: project.project_id, task_id: task.task_id, etag };
    },
  },
  'tasks with labels and due dates exist': {
    parameters: ['assignee'],
    async setUp({ api, made }, params) {
      const assignee = params.assignee ?? 'ana@example.com';
      const project = await createProject(api);
      const values: StateValues = { project_id: project.project_id };
      for (const [i, { unassigned, ...fields }] of plannedTasks.entries()) {
        const { task } = await createTask(api, project.project_id, {
          ...fields,
          ...(unassigned ? {} : { assignee }),
        });
        values[i === 0 ? 'task_id' : `task_id_${i + 1}`] = task.task_id;
      }
      Object.assign(made, { project_id: project.project_id, task_id: values.task_id });
      return values;
    },
  },
  'nothing exists': {
    parameters: [],
    async setUp() {
      return { project_id: uuidv7(), task_id: uuidv7(), webhook_endpoint_id: uuidv7() };
    },
  },
  "another tenant's task exists": {
    parameters: [],
    async setUp({ api }) {
      const other = await TenantApi.create(api.sandbox, `${api.name}-other`);
      const project = await createProject(other);
      const { task } = await createTask(other, project.project_id, {});
      return { project_id: project.project_id, task_id: task.task_id };
    },
  },
  'a webhook endpoint exists': {
    parameters: ['url', 'event_types'],
    async setUp({ api }, params) {
      const endpoint = (
        await api.call('POST', '/v1/webhook-endpoints', {
          // The sandbox itself: deliveries stay on this machine and go nowhere else.
          url: `${api.sandbox.url}/contract-test-receiver`,
          ...pick(params, ['url', 'event_types']),
        })
      ).json;
      return { webhook_endpoint_id: endpoint.webhook_endpoint_id };
    },
  },
  'the feed has events': {
    parameters: ['count'],
    async setUp({ api, made }, params) {
      const count = countParam(params, 3);
      const cursor = await settledCursor(api);
      const project = await createProject(api);
      made.project_id = project.project_id;
      for (let i = 1; i < count; i++)
        await createTask(api, project.project_id, { title: `Contract test task ${i}` });
      const after = await eventsUntil(api, cursor, api.lastChange!);
      return { cursor, latest_cursor: after.cursor };
    },
  },
  'the key can only read': {
    parameters: [],
    async setUp(tenant) {
      tenant.readOnly = true;
      return {};
    },
  },
};

export const stateNames = Object.keys(providerStates);

/** Sets a state up in the tenant, adding its values to the interaction's; an unknown name is an error naming the known ones. */
export async function setUpState(
  tenant: InteractionTenant,
  name: string,
  params: StateParams = {},
): Promise<StateValues> {
  const state = Object.hasOwn(providerStates, name) ? providerStates[name] : undefined;
  if (!state)
    throw new Error(
      `the provider state "${name}" is not one this service knows; the known states are: ${stateNames.map((known) => `"${known}"`).join(', ')}`,
    );
  const values = await state.setUp(tenant, params);
  Object.assign(tenant.values, values);
  return values;
}
