/**
 * The bare baseline the benchmark measures the service against: plain node:http and a mysql2
 * pool of the service's size, running the very statements the service runs for the four
 * benchmarked operations (the key lookup included) and answering the same JSON, with no
 * framework, validation, logging or middleware. `run-bench` checks, each run, that these
 * statements are still the service's own.
 *
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/db PORT=3001 node dist/test/bench/baseline-server.js
 */
import http from 'node:http';
import { createHash } from 'node:crypto';
import mysql, {
  type Pool,
  type PoolConnection,
  type ResultSetHeader,
  type RowDataPacket,
} from 'mysql2/promise';
import { v7 as uuidv7 } from 'uuid';
// The tokens of a task's words are the service's own rule, not framework: the baseline writes them too.
import { searchWords } from '../../src/db/task-filter/words';

export const statements = {
  begin: 'BEGIN',
  commit: 'COMMIT',
  findKey:
    'select `key_id`, `tenant_id`, `scopes`, `api_version` from `api_keys` where `key_hash` = ? and `revoked_at` is null and (`expires_at` is null or `expires_at` > ?) limit ?',
  insertTask:
    'insert into tasks (task_id, project_id, tenant_id, title, description, status, created_at, updated_at, priority, due_on, labels, assignee, version) values (?, (select project_id from projects where project_id = ? and tenant_id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  findTask:
    'select * from `tasks` where `task_id` = ? and `project_id` in (select `project_id` from `projects` where `tenant_id` = ?) limit ?',
  lockTask:
    'select * from `tasks` where `task_id` = ? and `project_id` in (select `project_id` from `projects` where `tenant_id` = ?) limit ? for update',
  insertSearchWords:
    'insert into `task_search_words` (`created_at`, `search_words`, `task_id`, `tenant_id`) values (?, ?, ?, ?)',
  insertEvent:
    'insert into `events` (`created_at`, `data`, `event_id`, `project_id`, `request_id`, `sequence`, `tenant_id`, `type`) values (?, ?, ?, ?, ?, ?, ?, ?)',
  updateTaskStatus:
    'update `tasks` set `status` = ?, `completed_at` = ?, `updated_at` = ?, `version` = ? where `task_id` = ? and `project_id` in (select `project_id` from `projects` where `tenant_id` = ?) and `version` = ?',
  listTasks:
    'select `tasks`.`task_id`, `tasks`.`project_id`, `tasks`.`title`, `tasks`.`description`, `tasks`.`status`, `tasks`.`created_at`, `tasks`.`updated_at`, `tasks`.`completed_at`, `tasks`.`priority`, `tasks`.`due_on`, `tasks`.`labels`, `tasks`.`assignee` from `tasks` inner join (select `task_id` from `tasks` where (`tasks`.`project_id` = ?) order by `created_at` asc, `task_id` asc limit ?) as `page` on `tasks`.`task_id` = `page`.`task_id` where exists (select `project_id` from `projects` where `project_id` = ? and `tenant_id` = ? limit ?) order by `tasks`.`created_at` asc, `tasks`.`task_id` asc',
};

/** Statements sent together, in one round trip (a multi-statement packet), as the service's transactions send them. */
const packet = (...sql: string[]) => sql.join(';\n');

/** What each benchmarked operation sends, one packet after another, on its usual path. */
export const statementsByOperation = {
  createTask: [
    statements.findKey,
    packet(
      statements.begin,
      statements.insertTask,
      statements.insertSearchWords,
      statements.insertEvent,
      statements.commit,
    ),
  ],
  getTask: [statements.findKey, statements.findTask],
  updateTask: [
    statements.findKey,
    packet(statements.begin, statements.lockTask),
    packet(statements.updateTaskStatus, statements.insertEvent, statements.commit),
  ],
  listProjectTasks: [statements.findKey, statements.listTasks],
};

interface TaskRow extends RowDataPacket {
  task_id: string;
  project_id: string;
  title: string;
  description: string | null;
  status: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  priority: number;
  due_on: string | null;
  labels: string;
  assignee: string | null;
  version: number;
}

const priorities = ['none', 'low', 'medium', 'high', 'urgent'];

const nowForDb = () => new Date().toISOString().replace('T', ' ').slice(0, 23);
const iso = (db: string) => db.replace(' ', 'T') + 'Z';
const toTask = (row: TaskRow) => ({
  task_id: row.task_id,
  project_id: row.project_id,
  title: row.title,
  description: row.description,
  status: row.status,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  completed_at: row.completed_at === null ? null : iso(row.completed_at),
  priority: priorities[row.priority],
  due_on: row.due_on,
  labels: JSON.parse(row.labels) as string[],
  assignee: row.assignee,
});
const closed = (status: string) => status === 'done' || status === 'cancelled';

/** The bindings of a change's event, written in the change's transaction as the service writes it. */
function eventValues(
  tenantId: string,
  type: string,
  task: ReturnType<typeof toTask>,
  previous?: object,
) {
  const data = JSON.stringify({ object: task, previous });
  return [nowForDb(), data, uuidv7(), task.project_id, uuidv7(), 0, tenantId, type];
}

/** Nothing to change: the transaction is rolled back and the answer is 404. */
class NotFound extends Error {}

/**
 * A change in one transaction on one connection, whose packets `work` sends (BEGIN with its first
 * statement, COMMIT with its last); rolled back if it throws. Undefined when there was nothing to change.
 */
async function inTransaction<T>(
  pool: Pool,
  work: (connection: PoolConnection) => Promise<T>,
): Promise<T | undefined> {
  const connection = await pool.getConnection();
  try {
    return await work(connection);
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => {});
    if (error instanceof NotFound) return undefined;
    throw error;
  } finally {
    connection.release();
  }
}

function main(): void {
  const url = new URL(process.env.DATABASE_URL!);
  const pool = mysql.createPool({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    timezone: 'Z',
    dateStrings: true,
    connectionLimit: 10,
    multipleStatements: true,
  });
  pool.pool.on('connection', (connection) => connection.query("SET time_zone = '+00:00'"));

  const send = (
    res: http.ServerResponse,
    status: number,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (body === undefined) {
      res.writeHead(status, headers).end();
      return;
    }
    res
      .writeHead(status, { ...headers, 'Content-Type': 'application/json' })
      .end(JSON.stringify(body));
  };
  const readBody = async (req: http.IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };

  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { pathname } = new URL(req.url!, 'http://x');
    if (pathname === '/readyz') return send(res, 200, { status: 'ready' });
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const hash = createHash('sha256').update(token).digest('hex');
    const [keys] = await pool.query<RowDataPacket[]>(statements.findKey, [hash, nowForDb(), 1]);
    if (keys.length === 0) return send(res, 401);
    const tenantId = keys[0].tenant_id as string;

    const taskPath = /^\/v1\/tasks\/([^/]+)$/.exec(pathname);
    const listPath = /^\/v1\/projects\/([^/]+)\/tasks$/.exec(pathname);
    if (req.method === 'POST' && pathname === '/v1/tasks') {
      const body = await readBody(req);
      const now = nowForDb();
      const row = {
        task_id: uuidv7(),
        project_id: body.project_id,
        title: body.title,
        description: body.description ?? null,
        status: 'pending',
        created_at: now,
        updated_at: now,
        // The benchmark's tasks have no planning fields: no labels, so no label folds to write.
        priority: 0,
        due_on: null,
        labels: '[]',
        assignee: null,
        version: 1,
      };
      const { task_id, project_id, ...rest } = row;
      const created = { ...row, completed_at: null } as TaskRow;
      const inserted = await inTransaction(pool, async (connection) => {
        // The project's id is NULL unless it is the tenant's: the insert fails, and the packet stops there.
        await connection
          .query(
            packet(
              statements.begin,
              statements.insertTask,
              statements.insertSearchWords,
              statements.insertEvent,
              statements.commit,
            ),
            [
              task_id,
              project_id,
              tenantId,
              // The task's tenant_id.
              tenantId,
              ...Object.values(rest),
              row.created_at,
              searchWords(row.title, row.description),
              task_id,
              tenantId,
              ...eventValues(tenantId, 'task.created', toTask(created)),
            ],
          )
          .catch((error: { code?: string }) => {
            throw error.code === 'ER_BAD_NULL_ERROR' ? new NotFound() : error;
          });
        return true;
      });
      if (inserted === undefined) return send(res, 404);
      return send(res, 201, toTask(created), {
        Location: `/v1/tasks/${row.task_id}`,
        ETag: '"1"',
      });
    }
    if (req.method === 'GET' && taskPath) {
      const [rows] = await pool.query<TaskRow[]>(statements.findTask, [taskPath[1], tenantId, 1]);
      if (rows.length === 0) return send(res, 404);
      return send(res, 200, toTask(rows[0]), { ETag: `"${rows[0].version}"` });
    }
    if (req.method === 'PATCH' && taskPath) {
      const { status } = await readBody(req);
      const changed = await inTransaction(pool, async (connection) => {
        const [results] = await connection.query(packet(statements.begin, statements.lockTask), [
          taskPath[1],
          tenantId,
          1,
        ]);
        const rows = (results as unknown as [ResultSetHeader, TaskRow[]])[1];
        if (rows.length === 0) throw new NotFound();
        const row = rows[0];
        const now = nowForDb();
        const updatedAt = row.created_at > now ? row.created_at : now;
        const after = {
          ...row,
          status,
          updated_at: updatedAt,
          completed_at: closed(status) ? (closed(row.status) ? row.completed_at : updatedAt) : null,
          version: row.version + 1,
        };
        const [answers] = await connection.query(
          packet(statements.updateTaskStatus, statements.insertEvent, statements.commit),
          [
            status,
            after.completed_at,
            after.updated_at,
            after.version,
            row.task_id,
            tenantId,
            row.version,
            ...eventValues(tenantId, 'task.updated', toTask(after), {
              status: row.status,
              updated_at: iso(row.updated_at),
              ...(after.completed_at === row.completed_at
                ? {}
                : { completed_at: row.completed_at === null ? null : iso(row.completed_at) }),
            }),
          ],
        );
        if ((answers as ResultSetHeader[])[0].affectedRows === 0)
          throw new Error('the locked row changed');
        return after;
      });
      if (changed === undefined) return send(res, 404);
      return send(res, 200, toTask(changed), { ETag: `"${changed.version}"` });
    }
    if (req.method === 'GET' && listPath) {
      const limit = Number(new URL(req.url!, 'http://x').searchParams.get('limit') ?? 20);
      const [rows] = await pool.query<TaskRow[]>(statements.listTasks, [
        listPath[1],
        limit + 1,
        listPath[1],
        tenantId,
        1,
      ]);
      const more = rows.length > limit;
      if (more) rows.length = limit;
      const last = rows[rows.length - 1];
      const nextCursor = more
        ? Buffer.from(
            JSON.stringify({ s: 'created_at', at: last.created_at, id: last.task_id }),
          ).toString('base64url')
        : null;
      return send(res, 200, { data: rows.map(toTask), next_cursor: nextCursor });
    }
    return send(res, 404);
  };

  http
    .createServer((req, res) => {
      answer(req, res).catch((error) => {
        // The load generator closes its connections mid-request when a run ends.
        if (req.destroyed) return;
        console.error(error);
        send(res, 500);
      });
    })
    .listen(Number(process.env.PORT), '127.0.0.1');
}

if (require.main === module) main();
