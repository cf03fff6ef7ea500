/**
 * The dashboard and the alert rules that ship in deploy/ (docs/operations.md,
 * "Dashboard and alerts"), read for the tests that hold them to the metrics the
 * gateway serves (test/integration/monitoring.test.ts) and to the docs
 * (test/unit/monitoring.test.ts): their PromQL expressions, and the metric
 * names each one reads.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
export const DASHBOARD_FILE = `${DEPLOY}grafana-dashboard.json`;
export const RULES_FILE = `${DEPLOY}prometheus-alerts.yaml`;
export const RULE_TESTS_FILE = `${DEPLOY}prometheus-alerts.test.yaml`;

/** Series Prometheus writes itself for every target, never served by a gateway. */
export const PROMETHEUS_SERIES: ReadonlySet<string> = new Set(['up']);

export interface Expression {
  /** Where it sits: a panel and its query, a template variable, an annotation, an alert. */
  where: string;
  expr: string;
}

interface Target {
  refId: string;
  expr: string;
}
export interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
}
export interface Dashboard {
  panels: Panel[];
  annotations: { list: Array<{ name: string; expr?: string }> };
  templating: { list: Array<{ name: string; type: string; query: string | { query: string } }> };
}
export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

export function readAlertRules(): AlertRule[] {
  const { groups } = parseYaml(readFileSync(RULES_FILE, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return groups.flatMap((group) => group.rules);
}

/** The panels of the dashboard, rows' nested panels included, rows themselves not. */
export function dashboardPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) => (panel.type === 'row' ? (panel.panels ?? []) : [panel]));
}

/** Every PromQL expression of the dashboard: panel queries, template variables (label_values' series), annotations. */
export function dashboardExpressions(dashboard: Dashboard): Expression[] {
  const panels = dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr })),
  );
  const variables = dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
      // label_values(SERIES, LABEL): only SERIES is PromQL.
      const series = /^label_values\((.+),\s*\w+\)$/.exec(query)?.[1] ?? query;
      return { where: `variable ${variable.name}`, expr: series };
    });
  const annotations = dashboard.annotations.list.flatMap((annotation) =>
    annotation.expr === undefined ? [] : [{ where: `annotation "${annotation.name}"`, expr: annotation.expr }],
  );
  return [...panels, ...variables, ...annotations];
}

export function ruleExpressions(rules: AlertRule[]): Expression[] {
  return rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }));
}

/** Words of PromQL that are not metric names where they stand outside parentheses of a call. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'group_left', 'group_right']);

/**
 * The metric names a PromQL expression reads: what is left once strings, Grafana
 * variables, label matchers, ranges, grouping clauses (`by (...)`, `on (...)`
 * ...), numbers, keywords and the names of functions and aggregations (a word
 * before `(`) are taken out.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\$\{\w+\}|\$\w+/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*(?![\w:])(?!\s*\()/g))
    if (!KEYWORDS.has(match[0])) names.add(match[0]);
  return [...names];
}
