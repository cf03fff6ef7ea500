/**
 * The `route` label of the HTTP metrics: which PAIA/DAIA method a request
 * was for. A fixed, small set of values, so the label never carries a patron
 * id or any other text from the URL. Unknown URLs, refused requests that
 * never reached a method (URL too long, plain HTTP behind a proxy) and
 * anything else are `other`.
 */
export const ROUTE_LABELS = [
  'login',
  'logout',
  'change',
  'patron',
  'items',
  'fees',
  'renew',
  'request',
  'cancel',
  'daia',
  'other',
] as const;
export type RouteLabel = (typeof ROUTE_LABELS)[number];

export interface AppPaths {
  /** `{basePath}/core` */
  corePrefix: string;
  /** `{basePath}/auth` */
  authPrefix: string;
  /** `{basePath}/daia`; null when DAIA is not served. */
  daiaPath: string | null;
}

/**
 * Route patterns exactly as the app registers them (hono's matched route
 * path, e.g. `/paia/core/:patron/items`) -> route label. Built once per app;
 * looking a request up is one Map get.
 */
export function routeTable(paths: AppPaths): ReadonlyMap<string, RouteLabel> {
  const { corePrefix, authPrefix, daiaPath } = paths;
  const table = new Map<string, RouteLabel>([
    [`${authPrefix}/login`, 'login'],
    [`${authPrefix}/logout`, 'logout'],
    [`${authPrefix}/change`, 'change'],
    [`${corePrefix}/:patron`, 'patron'],
    [`${corePrefix}/:patron/items`, 'items'],
    [`${corePrefix}/:patron/fees`, 'fees'],
    [`${corePrefix}/:patron/renew`, 'renew'],
    [`${corePrefix}/:patron/request`, 'request'],
    [`${corePrefix}/:patron/cancel`, 'cancel'],
  ]);
  if (daiaPath !== null) table.set(daiaPath, 'daia');
  return table;
}

/** The label of a matched route pattern; `other` for `*` and anything not in the table. */
export function classifyRoute(table: ReadonlyMap<string, RouteLabel>, routePath: string | undefined): RouteLabel {
  return (routePath === undefined ? undefined : table.get(routePath)) ?? 'other';
}
