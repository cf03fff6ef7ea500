import { z } from 'zod';

/**
 * The PAIA data the backend answers, declared once: the types of types.ts
 * are inferred from these schemas, and the OpenAPI description's Patron,
 * Document, Fee and Fees components are derived from them
 * (http/openapi/document.ts), so the two cannot drift. Nothing validates
 * with them at run time: the backend builds these objects itself. The
 * conformance suite keeps its own shapes (test/conformance/shapes.ts), an
 * oracle independent of these.
 *
 * `.meta()` says what only the OpenAPI description shows: a description, or
 * a format the gateway keeps to but does not check (dates are YYYY-MM-DD).
 */

/** Service status of a document for a patron (spec: 0 none ... 5 rejected). */
export const serviceStatusSchema = z
  .literal([0, 1, 2, 3, 4, 5])
  .meta({ description: '0 no relation, 1 reserved, 2 ordered, 3 held, 4 provided, 5 rejected' });

/** Account state: 0 active, 1 inactive, 2 expired, 3 outstanding fees, 4 expired and fees. */
export const accountStateSchema = z
  .literal([0, 1, 2, 3, 4])
  .meta({ description: '0 active, 1 inactive, 2 expired, 3 outstanding fees, 4 expired and fees' });

/** YYYY-MM-DD */
const date = z.string().meta({ format: 'date' });
const count = z.int().min(0);
/** Money as "x.xx CUR". */
const money = z.string().regex(/^[0-9]+\.[0-9][0-9] [A-Z][A-Z][A-Z]$/);

export const patronRecordSchema = z.strictObject({
  name: z.string(),
  email: z.string().optional(),
  address: z.string().optional(),
  expires: date.optional(),
  status: accountStateSchema,
  /** URIs of patron types (PAIA upstream), from the ILS patron class. */
  type: z.array(z.string()).optional(),
});

export const paiaDocumentSchema = z.strictObject({
  status: serviceStatusSchema,
  item: z.string().optional().meta({ description: 'URI of the item' }),
  edition: z.string().optional().meta({ description: 'URI of the edition (title)' }),
  requested: z.string().optional(),
  about: z.string().optional(),
  label: z.string().optional(),
  queue: count.optional(),
  renewals: count.optional(),
  reminder: count.optional(),
  duedate: date.optional(),
  /** YYYY-MM-DD: upstream PAIA's name for the end of the service status; same value as duedate. */
  endtime: z.string().optional().meta({ description: 'Same value as duedate (upstream PAIA)' }),
  starttime: z.string().optional(),
  cancancel: z.boolean().optional(),
  canrenew: z.boolean().optional(),
  error: z.string().optional().meta({ description: 'Why this document could not be served' }),
  storage: z.string().optional(),
  storageid: z.string().optional(),
});

export const feeSchema = z.strictObject({
  amount: money,
  date: z.string().optional(),
  about: z.string().optional(),
  item: z.string().optional(),
  edition: z.string().optional(),
  feetype: z.string().optional(),
  feeid: z.string().optional(),
});

export const feeRecordSchema = z.strictObject({
  amount: money.optional(),
  fee: z.array(feeSchema),
});
