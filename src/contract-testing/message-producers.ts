/**
 * Pact message interactions for events. A message's description names an event type (`a
 * task.updated event`); the provider makes that change through the API in the interaction's
 * tenant, after its states, on what the states made when they made one (the task of `a task
 * exists`), and answers the Event as the feed shows it, which is the body webhooks deliver.
 */
import type { components } from '../../generated/api';
import { eventsUntil, settledCursor, type InteractionTenant } from './provider-states';

type EventType = components['schemas']['EventType'];
type Event = components['schemas']['Event'];
type TaskStatus = components['schemas']['TaskStatus'];

/** `task.updated` moves the task on: pending → in_progress → done → pending, cancelled → pending. */
const nextStatus: Record<TaskStatus, TaskStatus> = {
  pending: 'in_progress',
  in_progress: 'done',
  done: 'pending',
  cancelled: 'pending',
};

async function projectId(tenant: InteractionTenant): Promise<string> {
  if (tenant.made.project_id) return tenant.made.project_id;
  return (await tenant.api.call('POST', '/v1/projects', { name: 'Contract test project' })).json
    .project_id;
}

async function taskId(tenant: InteractionTenant): Promise<string> {
  if (tenant.made.task_id) return tenant.made.task_id;
  const project = await projectId(tenant);
  return (
    await tenant.api.call('POST', '/v1/tasks', { project_id: project, title: 'Contract test task' })
  ).json.task_id;
}

/** The change that records each event type (the compiler holds this to the document's list). */
const changes: Record<EventType, (tenant: InteractionTenant) => Promise<unknown>> = {
  'project.created': ({ api }) =>
    api.call('POST', '/v1/projects', { name: 'Contract test project' }),
  'project.updated': async (tenant) => {
    const id = await projectId(tenant);
    const { json } = await tenant.api.call('GET', `/v1/projects/${id}`);
    return tenant.api.call('PATCH', `/v1/projects/${id}`, { name: `${json.name} (renamed)` });
  },
  'project.deleted': async (tenant) =>
    tenant.api.call('DELETE', `/v1/projects/${await projectId(tenant)}`),
  'task.created': async (tenant) =>
    tenant.api.call('POST', '/v1/tasks', {
      project_id: await projectId(tenant),
      title: 'Contract test task',
    }),
  'task.updated': async (tenant) => {
    const id = await taskId(tenant);
    const { json } = await tenant.api.call('GET', `/v1/tasks/${id}`);
    return tenant.api.call('PATCH', `/v1/tasks/${id}`, {
      status: nextStatus[json.status as TaskStatus],
    });
  },
  'task.deleted': async (tenant) => tenant.api.call('DELETE', `/v1/tasks/${await taskId(tenant)}`),
};

export const eventTypes = Object.keys(changes) as EventType[];
export const messageDescriptions = eventTypes.map(
  (type) => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} event`,
);

/** The event type a message's description names, or undefined. */
export function eventTypeOf(description: string): EventType | undefined {
  const match = /^an? ([a-z]+\.[a-z]+) event$/.exec(description.trim());
  return match && (eventTypes as string[]).includes(match[1]) ? (match[1] as EventType) : undefined;
}

/** Makes the change the description names and answers its Event as the feed has it. */
export async function produceEvent(tenant: InteractionTenant, description: string): Promise<Event> {
  const type = eventTypeOf(description);
  if (!type)
    throw new Error(
      `the message "${description}" names no event this service produces; the known messages are: ${messageDescriptions.map((known) => `"${known}"`).join(', ')}`,
    );
  // Setting up the states recorded events too, numbered a moment later: the change's own is found by its request.
  const cursor = await settledCursor(tenant.api);
  await changes[type](tenant);
  const { events } = await eventsUntil(tenant.api, cursor, tenant.api.lastChange!);
  return events.find((event) => event.request_id === tenant.api.lastChange)!;
}
