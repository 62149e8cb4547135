/**
 * What deploy/ gives operators, against a scrape of the running service: the Grafana dashboard
 * queries only metrics the service has and shows every one of its own, each alert rule has a
 * panel over its metrics that names it, the files that provision the dashboard fit it and the
 * README; the Prometheus alert rules query only metrics the service has, and cover the README's
 * "alert when" column.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { scrapeUntil, type Scrape } from '../support/metrics-scrape';
import { metricNamesIn } from '../support/promql';
import { startTestService, type TestService } from '../support/test-service';

const root = path.join(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface DataSourceRef {
  type: string;
  uid: string;
}
interface Panel {
  type: string;
  title: string;
  description?: string;
  datasource?: DataSourceRef;
  targets?: Array<{ expr: string; datasource: DataSourceRef }>;
}
const dashboard = JSON.parse(read('deploy/grafana/task-tracker.json')) as {
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
};
const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
const queried = (panel: Panel) =>
  (panel.targets ?? []).flatMap((target) => metricNamesIn(target.expr));

const rules = (
  YAML.parse(read('deploy/prometheus/alerts.yml')) as {
    groups: Array<{
      rules: Array<{ alert: string; expr: string; annotations: Record<string, string> }>;
    }>;
  }
).groups.flatMap((group) => group.rules);

let api: TestService;
let scrape: Scrape;

beforeAll(async () => {
  api = await startTestService();
  // Series with labels appear once something is counted in them: a request, and a long poll answered.
  const key = await api.createKey('operators');
  const latest = await api.send('GET', '/v1/events?from=latest', { key });
  const poll = api.send('GET', `/v1/events?cursor=${latest.json.next_cursor}&wait=20`, { key });
  await scrapeUntil(api.baseUrl, (s) => s.value('events_long_polls_waiting') === 1);
  const created = await api.send('POST', '/v1/projects', {
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'p' }),
  });
  expect([created.status, (await poll).status]).toEqual([201, 200]);
  scrape = await scrapeUntil(api.baseUrl, (s) =>
    s.names.has('http_long_poll_duration_seconds_bucket'),
  );
});
afterAll(() => api.stop());

describe('reading PromQL', () => {
  it('finds the metrics, not functions, aggregations, labels, keywords, ranges or variables', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.95, sum by (le, operation) (rate(http_request_duration_seconds_bucket{status=~"5.."}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(
      metricNamesIn(
        'sum(a_total) / ignoring(x) b_total offset -5m > bool 1e3 and on(instance) group_left(y) c',
      ),
    ).toEqual(['a_total', 'b_total', 'c']);
    expect(
      metricNamesIn(
        'SUM without (le) (d{label="}, by (x) e", other!~\'[f]\'}) # g_total\n or deriv(max(h)[5m:30s]) @ end()',
      ),
    ).toEqual(['d', 'h']);
    expect(metricNamesIn('count_values("version", {__name__="build_info", job="$job"})')).toEqual([
      'build_info',
    ]);
  });

  it('refuses what is not PromQL, rather than miss a name in it', () => {
    expect(() => metricNamesIn('sum(rate(a_total[5m])')).toThrow(/\) missing/);
    expect(() => metricNamesIn('a{b="c}')).toThrow(/cannot read/);
    expect(() => metricNamesIn('a) + b')).toThrow(/closes nothing/);
  });
});

describe('the Grafana dashboard', () => {
  it('queries only metrics that a scrape of the running service has', () => {
    const missing = panels.flatMap((panel) =>
      queried(panel)
        .filter((name) => !scrape.names.has(name))
        .map((name) => `${panel.title}: ${name}`),
    );
    expect(panels.length).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  it("shows every metric of the service's own", () => {
    const shown = new Set(panels.flatMap(queried));
    // Node's process metrics apart; a histogram by its buckets.
    const families = [...scrape.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
      .filter(([, name]) => !/^(process|nodejs)_/.test(name))
      .map(([, name, type]) => (type === 'histogram' ? `${name}_bucket` : name));
    expect(families.length).toBeGreaterThan(15);
    expect(families.filter((name) => !shown.has(name))).toEqual([]);
  });

  it('has, for each alert rule, a panel over every metric the rule uses that names the rule', () => {
    const unshown = rules
      .filter(
        (rule) =>
          !panels.some(
            (panel) =>
              panel.description?.includes(rule.alert) &&
              metricNamesIn(rule.expr).every((name) => queried(panel).includes(name)),
          ),
      )
      .map((rule) => rule.alert);
    expect(rules.length).toBeGreaterThan(10);
    expect(unshown).toEqual([]);
  });

  it('is provisioned by files that load it from the folder the README mounts, over the Prometheus they add', () => {
    const provider = (
      YAML.parse(read('deploy/grafana/provisioning/dashboards/task-tracker.yaml')) as {
        providers: Array<{ type: string; options: { path: string } }>;
      }
    ).providers[0];
    const [source] = (
      YAML.parse(read('deploy/grafana/provisioning/datasources/prometheus.yaml')) as {
        datasources: Array<{ type: string; url: string; isDefault: boolean }>;
      }
    ).datasources;
    expect([provider.type, source.type, source.url, source.isDefault]).toEqual([
      'file',
      'prometheus',
      '${PROMETHEUS_URL}',
      true,
    ]);
    const mounts = [...read('README.md').matchAll(/-v "\$PWD\/([^:"]+):([^:"]+)(?::ro)?"/g)].map(
      ([, from, to]) => `${from} at ${to}`,
    );
    expect(mounts).toEqual([
      `deploy/grafana at ${provider.options.path}`,
      'deploy/grafana/provisioning/dashboards at /etc/grafana/provisioning/dashboards',
      'deploy/grafana/provisioning/datasources at /etc/grafana/provisioning/datasources',
    ]);
    // Every query goes to the data source the dashboard's variable picks: a Prometheus.
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    const references = panels.flatMap((panel) => [
      panel.datasource,
      ...(panel.targets ?? []).map((target) => target.datasource),
    ]);
    expect(new Set(references.map((reference) => JSON.stringify(reference)))).toEqual(
      new Set([JSON.stringify({ type: 'prometheus', uid: '${datasource}' })]),
    );
  });
});

describe('the Prometheus alert rules', () => {
  it('query only metrics that a scrape of the running service has', () => {
    const names = new Set(rules.flatMap((rule) => metricNamesIn(rule.expr)));
    expect(names.size).toBeGreaterThan(10);
    expect([...names].filter((name) => !scrape.names.has(name))).toEqual([]);
  });

  it('alert on every metric the README\'s "alert when" column names a condition for', () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('| metric | what | alert when |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const alerted = rows
      .map((row) => row.split(' | '))
      .filter((cells) => !cells[cells.length - 1].trim().startsWith('—'))
      .map((cells) => [...cells[0].matchAll(/`([a-z][a-z_]+)/g)].map((match) => match[1]));
    const covered = new Set(rules.flatMap((rule) => metricNamesIn(rule.expr)));
    const named = (metric: string) =>
      [...covered].some((name) => name === metric || name.startsWith(`${metric}_`));
    // The long polls' level depends on the tenants polling, which no metric gives (alerts.yml says so).
    // A row may name several metrics (the pool's): a rule on one of them covers it.
    expect(alerted.filter((metrics) => !metrics.some(named))).toEqual([
      ['events_long_polls_waiting'],
    ]);
    for (const rule of rules) expect(rule.annotations.summary).toMatch(/\S/);
  });
});
