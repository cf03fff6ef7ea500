/**
 * The dashboard and the alert rules of deploy/, read as files: the dashboard
 * is a well-formed Grafana model (unique ids, panels inside the grid and not
 * overlapping, every query on the chosen data source and instances), every
 * rule says how bad it is and what it means, docs/operations.md ("Dashboard
 * and alerts") names every panel and every alert and nothing else, and the
 * extraction of metric names the integration test relies on finds them.
 * Whether /metrics serves those names and promtool accepts the rules:
 * test/integration/monitoring.test.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rows, section } from '../helpers/markdown.js';
import {
  dashboardExpressions,
  dashboardPanels,
  metricNames,
  readAlertRules,
  readDashboard,
  ruleExpressions,
} from '../helpers/monitoring.js';

const OPERATIONS = readFileSync(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8');
const dashboard = readDashboard();
const panels = dashboardPanels(dashboard);
const rules = readAlertRules();

describe('metricNames (the names a PromQL expression reads)', () => {
  it('leaves out functions, aggregations, grouping labels, label matchers, ranges, numbers and Grafana variables', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, route) (rate(paia_a_bucket{job=~"$job", x="{y}"}[$__rate_interval])))',
      ),
    ).toEqual(['paia_a_bucket']);
    expect(
      metricNames(
        'max by (job) (a) == 0 and on (job) sum by(job)(increase(b_total[5m])) > 1e3 unless ignoring (x) c offset 1m',
      ),
    ).toEqual(['a', 'b_total', 'c']);
    expect(metricNames('sum(rate(x[5m])) * 60 / on (i) group_left y')).toEqual(['x', 'y']);
    expect(metricNames('up{job="paia-sip2"} == 0')).toEqual(['up']);
  });
});

describe('the Grafana dashboard (deploy/grafana-dashboard.json)', () => {
  /** Rows and panels, those inside collapsed rows too. */
  const laid = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);

  it('gives every panel and row a unique id', () => {
    const ids = laid.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lays the panels out inside the 24 columns, none over another', () => {
    const problems: string[] = [];
    for (const [i, a] of laid.entries()) {
      const { x, y, w, h } = a.gridPos;
      if (x < 0 || w < 1 || h < 1 || x + w > 24) problems.push(`${a.title}: outside the grid`);
      for (const b of laid.slice(i + 1)) {
        const other = b.gridPos;
        if (x < other.x + other.w && other.x < x + w && y < other.y + other.h && other.y < y + h)
          problems.push(`${a.title} overlaps ${b.title}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('queries the chosen Prometheus data source, job and instances in every panel, each saying what it answers', () => {
    const problems = panels.flatMap((panel) => {
      const found: string[] = [];
      if (!panel.description) found.push('no description');
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's syntax for a variable, not a template literal
      if (panel.datasource?.uid !== '${datasource}') found.push('not on the data source variable');
      const targets = panel.targets ?? [];
      if (targets.length === 0) found.push('no query');
      if (new Set(targets.map((target) => target.refId)).size !== targets.length) found.push('refIds repeat');
      for (const target of targets)
        if (!target.expr.includes('job=~"$job", instance=~"$instance"'))
          found.push(`${target.refId} not on the selected job and instances`);
      return found.map((problem) => `${panel.title}: ${problem}`);
    });
    expect(problems).toEqual([]);
    expect(new Set(panels.map((panel) => panel.title)).size).toBe(panels.length);
  });
});

describe('the alert rules (deploy/prometheus-alerts.yaml)', () => {
  it('cover the failures a sysadmin must hear of', () => {
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'PaiaSip2IlsUnreachable',
        'PaiaSip2CircuitOpen',
        'PaiaSip2PoolSaturated',
        'PaiaSip2ServerErrors',
        'PaiaSip2LoginLockoutSpike',
        'PaiaSip2StateStoreDown',
      ]),
    );
  });

  it('each have a severity, a summary and a description', () => {
    const problems = rules.flatMap((rule) =>
      ['critical', 'warning'].includes(rule.labels?.severity) &&
      rule.annotations?.summary &&
      rule.annotations?.description
        ? []
        : [rule.alert],
    );
    expect(problems).toEqual([]);
  });
});

describe('docs/operations.md, "Dashboard and alerts"', () => {
  const text = section(OPERATIONS, 'Dashboard and alerts');
  const [panelTable, alertTable] = text
    .split(/\n\s*\n/)
    .filter((block) => block.trimStart().startsWith('|'))
    .map((block) => rows(block).slice(1));

  it('says what every panel answers, in the order of the dashboard, and names no other', () => {
    expect(panelTable!.map((cells) => cells[0])).toEqual(panels.map((panel) => panel.title));
  });

  it('says what every alert means and what to do, and names no other', () => {
    expect(alertTable!.map((cells) => cells[0]!.replace(/ \(.*\)$/, ''))).toEqual(rules.map((rule) => rule.alert));
    expect(alertTable!.every((cells) => cells.length === 3 && cells.every((cell) => cell.length > 0))).toBe(true);
  });

  it('links both files', () => {
    expect(text).toContain('(../deploy/grafana-dashboard.json)');
    expect(text).toContain('(../deploy/prometheus-alerts.yaml)');
  });
});

describe('the expressions the integration test checks against /metrics', () => {
  it('come from every panel query, the template variables, the annotations and every rule', () => {
    const expressions = dashboardExpressions(dashboard);
    const queries = panels.reduce((sum, panel) => sum + (panel.targets?.length ?? 0), 0);
    expect(expressions.length).toBe(queries + 2 + 2);
    expect(ruleExpressions(rules).length).toBe(rules.length);
  });
});
