import { z } from 'zod';
import type { DocumentRequest } from '../backend/types.js';
import { unprocessable } from './errors.js';

/**
 * Request bodies, validated with zod after parsing. A body that parses but
 * does not fit is a 422 invalid_request whose description names the first
 * problem, with its place (`doc[2].item must be a string`).
 */

type Issue = z.core.$ZodIssue;

function fieldError(kind: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? 'is missing' : `must be ${kind}`);
}

const uri = () => z.string({ error: fieldError('a string (a URI)') }).optional();
const text = () => z.string({ error: fieldError('a string') }).optional();

function hasIdentifier(doc: { item?: string | undefined; edition?: string | undefined }): boolean {
  return (doc.item !== undefined && doc.item !== '') || (doc.edition !== undefined && doc.edition !== '');
}

function docListSchema<T extends z.ZodType>(element: T, maxDocs: number) {
  return z.object(
    {
      doc: z
        .array(element, { error: fieldError('an array of documents') })
        .min(1, { error: 'must list at least one document' })
        .max(maxDocs, { error: `must list at most ${maxDocs} documents per request` }),
    },
    { error: 'the request body must be a JSON object with a doc array' },
  );
}

const documentElement = z
  .object({ item: uri(), edition: uri() }, { error: 'must be an object with item or edition' })
  .refine(hasIdentifier, { error: 'needs an item or an edition URI' });

const requestElement = z
  .object(
    { item: uri(), edition: uri(), storage: text(), storageid: uri() },
    { error: 'must be an object with item or edition' },
  )
  .refine(hasIdentifier, { error: 'needs an item or an edition URI' });

/**
 * The `doc` list of renew and cancel (item, edition) or request (also the
 * pickup location: storage, storageid). Other fields are ignored; the
 * result holds only the fields the backend takes.
 */
export function parseDocuments(body: unknown, options: { maxDocs: number; pickup: boolean }): DocumentRequest[] {
  const schema = docListSchema(options.pickup ? requestElement : documentElement, options.maxDocs);
  const result = schema.safeParse(body);
  if (!result.success) throw unprocessable(describe(result.error.issues));
  return result.data.doc.map((doc) => {
    const picked: DocumentRequest = {};
    for (const key of ['item', 'edition', 'storage', 'storageid'] as const) {
      const value = (doc as DocumentRequest)[key];
      if (value !== undefined) picked[key] = value;
    }
    return picked;
  });
}

const required = (kind: string) => z.string({ error: fieldError(kind) }).min(1, { error: 'must not be empty' });

const loginSchema = z.object(
  {
    username: required('a string'),
    password: required('a string'),
    grant_type: z
      .string({ error: fieldError('the string "password"') })
      .refine((value) => value === 'password', { error: 'must be "password" (the only grant type supported)' }),
    scope: z.string({ error: fieldError('a string of space-separated scopes') }).optional(),
  },
  { error: 'the request body must be an object with username, password and grant_type' },
);

export type LoginInput = z.infer<typeof loginSchema>;

export function parseLogin(body: unknown): LoginInput {
  const result = loginSchema.safeParse(body);
  if (!result.success) throw unprocessable(describe(result.error.issues));
  return result.data;
}

const clientCredentialsSchema = z.object(
  {
    grant_type: z.literal('client_credentials'),
    patron: required("a string (the patron's username or barcode)"),
    scope: z.string({ error: fieldError('a string of space-separated scopes') }).optional(),
  },
  { error: 'the request body must be an object with grant_type and patron' },
);

export type ClientCredentialsInput = z.infer<typeof clientCredentialsSchema>;

/** Whether a login body asks for the client credentials grant (auth.clients). */
export function isClientCredentialsGrant(body: unknown): boolean {
  return (
    typeof body === 'object' && body !== null && (body as { grant_type?: unknown }).grant_type === 'client_credentials'
  );
}

export function parseClientCredentials(body: unknown): ClientCredentialsInput {
  const result = clientCredentialsSchema.safeParse(body);
  if (!result.success) throw unprocessable(describe(result.error.issues));
  return result.data;
}

const logoutSchema = z.object(
  { patron: required('a string (the patron identifier)') },
  {
    error: 'the request body must be an object with patron',
  },
);

export function parseLogout(body: unknown): { patron: string } {
  const result = logoutSchema.safeParse(body);
  if (!result.success) throw unprocessable(describe(result.error.issues));
  return result.data;
}

/** `doc[2].item must be a string`; body-level problems stand alone. */
function describe(issues: readonly Issue[]): string {
  const issue = issues[0];
  if (issue === undefined) return 'the request body does not fit this method';
  if (issue.path.length === 0) return issue.message;
  return `${formatPath(issue.path)} ${issue.message}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
