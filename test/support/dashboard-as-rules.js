// The Grafana dashboard's queries as Prometheus recording rules, for `promtool check rules` to
// check their PromQL (test/run-tests.sh): Grafana's range variables are given a value first.
'use strict';
const path = require('node:path');

const dashboard = require(path.join(__dirname, '../../deploy/grafana/task-tracker.json'));
const rules = dashboard.panels.flatMap((panel) =>
  (panel.targets ?? []).map((target) => ({
    record: `task_tracker_dashboard:panel_${panel.id}_${target.refId}`,
    expr: target.expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h'),
  })),
);
// JSON is YAML, which promtool reads.
process.stdout.write(JSON.stringify({ groups: [{ name: dashboard.uid, rules }] }));
