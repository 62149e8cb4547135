/**
 * `npm run -s webhooks -- <paused|resume>`: the operator's side of paused webhook deliveries, in
 * the database the service uses (DATABASE_URL, as for `npm start`).
 *
 *   paused                  each paused tenant: name, id, when and why
 *   resume --tenant NAME    its deliveries start again, on every instance, within a second
 */
import { parseArgs } from 'node:util';
import { tenantPauses, type TenantPauses } from '../webhooks/tenant-pauses';
import { runDatabaseCommand, UsageError } from './database-command';

const usage = `usage: npm run -s webhooks -- paused
       npm run -s webhooks -- resume --tenant NAME`;

async function paused(pauses: TenantPauses): Promise<void> {
  const all = await pauses.list();
  if (all.length === 0) return console.log('No tenant has its webhook deliveries paused.');
  for (const tenant of all)
    console.log(`${tenant.name}\t${tenant.tenantId}\tpaused ${tenant.pausedAt}\t${tenant.reason}`);
}

async function resume(pauses: TenantPauses, args: string[]): Promise<void> {
  let tenant: string | undefined;
  try {
    ({
      values: { tenant },
    } = parseArgs({ args, options: { tenant: { type: 'string' } } }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
  if (!tenant) throw new UsageError(`resume needs --tenant NAME\n${usage}`);
  if (!(await pauses.resume(tenant)))
    throw new UsageError(`tenant ${JSON.stringify(tenant)} has no paused webhook deliveries`);
  console.log(`Resumed the webhook deliveries of tenant ${tenant}.`);
}

runDatabaseCommand(usage, {
  paused: (knex) => paused(tenantPauses(knex)),
  resume: (knex, args) => resume(tenantPauses(knex), args),
});
