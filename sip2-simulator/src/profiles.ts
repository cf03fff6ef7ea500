/**
 * Server profiles: what real SIP2 deployments do to a client, beyond the
 * protocol itself. A profile is a set of knobs; named presets set several
 * knobs at once, modelled on one real deployment each. Knobs and presets
 * combine left to right (`koha,workers=2`), later terms win. Faults are
 * separate (faults.ts) and combine with any profile.
 *
 * Sources for every knob and preset are in the README ("Server profiles").
 */

/** How the 64's fine items (AV) and the account fields BV/BH are written. */
export const FINE_FORMATS = ['dialect', 'sipserver', 'koha', 'eg-legacy', 'eg-3m', 'eg-swyer-b', 'folio'] as const;
export type FineFormat = (typeof FINE_FORMATS)[number];

/**
 * How the six counts of a 64 are written: exact (each its list's length),
 * folio (the unavailable holds count left blank, as edge-sip2 does), blank
 * (all six blank: "not available" in the 3M text), zero (all six 0000 while
 * the lists keep their entries: counts no client can trust).
 */
const COUNT_MODES = ['exact', 'folio', 'blank', 'zero'] as const;
export type CountMode = (typeof COUNT_MODES)[number];

/**
 * What the 64's unavailable holds list (CD) holds: pending (the holds not
 * yet available, as the 3M text, the Perl SIPServer and Evergreen have it),
 * or closed (only unfilled or cancelled requests, as FOLIO's edge-sip2; the
 * simulator keeps none, so CD is empty while AS still lists every hold).
 */
const UNAVAILABLE_HOLDS = ['pending', 'closed'] as const;
type UnavailableHolds = (typeof UNAVAILABLE_HOLDS)[number];

/**
 * What a 16 that placed a hold says in its available flag: copy (Y when a
 * copy is on the shelf to fill it), or waiting (Y only when an item already
 * waits for this patron, so N for a hold just placed: the Perl SIPServer's
 * and Koha's `available($patron_id)`).
 */
const HOLD_AVAILABLE = ['copy', 'waiting'] as const;
type HoldAvailable = (typeof HOLD_AVAILABLE)[number];

/** How a patron identifier sent in AA is matched against the stored ones (patron-ids.ts). */
const ID_MATCHES = ['exact', 'folded'] as const;
export type IdMatch = (typeof ID_MATCHES)[number];

export interface Profile {
  /** At most this many SIP2 sessions are served at once; further connections wait unread. null = no limit. */
  workers: number | null;
  /** Seconds without a message before the server closes a session; 0 = never; null = --idle-timeout-s. */
  idleTimeoutS: number | null;
  /** The AV text format (and the BV/BH habits that go with it). */
  fines: FineFormat;
  /** Send BV (fee amount) / BH (currency): null = as the fine format's system does. */
  bv: boolean | null;
  bh: boolean | null;
  /** List pages are padded with empty entries up to the requested BQ (Perl list slices past the end). */
  pad: boolean;
  /** After login, the first message must be 99; anything else closes the connection (SIPServer). */
  scStatusFirst: boolean;
  /** Patron identifiers matched exactly, or as a case- and accent-insensitive SQL collation compares them (Koha). */
  ids: IdMatch;
  /** How the 64's six counts are written. */
  counts: CountMode;
  /** Which holds the 64's CD lists. */
  unavailableHolds: UnavailableHolds;
  /** The 98's BX (supported messages), 16 Y/N; null = every message supported. */
  bx: string | null;
  /** A check-in away from the item's home (or a hold's pickup location) sends it in transit; off = no locations, no transfers. */
  transfers: boolean;
  /** A refused check-in (item not on loan, unknown barcode) raises the 10's alert. */
  refusedCheckinAlert: boolean;
  /** The 16's available flag after a hold was placed. */
  holdAvailable: HoldAvailable;
}

export function defaultProfile(): Profile {
  return {
    workers: null,
    idleTimeoutS: null,
    fines: 'dialect',
    bv: null,
    bh: null,
    pad: false,
    scStatusFirst: false,
    ids: 'exact',
    counts: 'exact',
    unavailableHolds: 'pending',
    bx: null,
    transfers: true,
    refusedCheckinAlert: true,
    holdAvailable: 'copy',
  };
}

/** Named presets: each one real deployment, as the terms it stands for. */
export const PRESETS: Readonly<Record<string, string>> = {
  // Koha's shipped etc/SIPconfig.xml: server-params min_servers=1 min_spare_servers=0 (one
  // Net::Server::PreFork worker, no spare), RAW listener client_timeout=600, default av_field_template;
  // patrons found by userid or cardnumber in MariaDB/MySQL columns of collation utf8mb4_unicode_ci
  // (Koha::Patrons->find_by_identifier, kohastructure.sql), which ignores case, accents and trailing spaces.
  // Checkin.pm sends an item returned away from home in transit (alert type 04) and alerts on a
  // refused return (alert = !$return); Item.pm's available() says N for a hold just placed.
  koha: 'workers=1,idle-timeout=600,fines=koha,ids=folded,transfers=on,refused-checkin-alert=on,hold-available=waiting',
  // The Perl SIPServer (atz/SIPServer) with its sample ILS: PreFork's default max_servers=50, no
  // timeout once logged in, fine_items as plain strings, no BV/BH, list slices padded, 99 first;
  // its sample ILS has no locations (no transfers), raises no alert on a refused check-in
  // (ILS::Transaction::Checkin never sets alert: 100YNN) and answers a placed hold available N.
  sipserver:
    'workers=50,idle-timeout=0,fines=sipserver,pad=on,sc-status-first=on,transfers=off,refused-checkin-alert=off,hold-available=waiting',
  // Evergreen's SIPServer with the default av_format eg_legacy; its list slices pad like SIPServer's.
  evergreen: 'fines=eg-legacy,pad=on',
  // FOLIO edge-sip2: AV = item barcodes of open fee/fine accounts, BV as a Java float, the
  // unavailable holds count blank, CD only closed requests (PatronRepository getUnavailableHoldItems).
  folio: 'fines=folio,counts=folio,unavailable-holds=closed',
};

const KNOBS = [
  'workers',
  'idle-timeout',
  'fines',
  'bv',
  'bh',
  'pad',
  'sc-status-first',
  'ids',
  'counts',
  'unavailable-holds',
  'bx',
  'transfers',
  'refused-checkin-alert',
  'hold-available',
] as const;

/** A 98 BX: one Y or N per message pair of the 3M list, 16 of them. */
const BX = /^[YN]{16}$/;

/** What `--help`, the README and error messages list. */
const PROFILE_HELP = [
  `presets: ${Object.keys(PRESETS).join(', ')}`,
  'knobs: workers=N (1-1000), idle-timeout=S (0 = never), ' +
    `fines=${FINE_FORMATS.join('|')}, bv=on|off, bh=on|off, pad=on|off, sc-status-first=on|off, ` +
    `ids=${ID_MATCHES.join('|')}, counts=${COUNT_MODES.join('|')}, unavailable-holds=${UNAVAILABLE_HOLDS.join('|')}, ` +
    `bx=16 Y/N (the 98's supported messages), transfers=on|off, refused-checkin-alert=on|off, ` +
    `hold-available=${HOLD_AVAILABLE.join('|')}`,
].join('; ');

export class ProfileError extends Error {}

/**
 * Reads profile terms: each string is a comma-separated list of presets and
 * knob=value terms, applied left to right over `base` (default: no profile).
 * "none" resets to no profile. Throws ProfileError naming the bad term.
 */
export function parseProfile(specs: readonly string[], base: Profile = defaultProfile()): Profile {
  let profile = { ...base };
  for (const spec of specs) {
    for (const raw of spec.split(',')) {
      const term = raw.trim();
      if (term === '') continue;
      if (term === 'none') {
        profile = defaultProfile();
        continue;
      }
      const preset = PRESETS[term];
      if (preset !== undefined) {
        profile = parseProfile([preset], profile);
        continue;
      }
      profile = applyKnob(profile, term);
    }
  }
  return profile;
}

function applyKnob(profile: Profile, term: string): Profile {
  const eq = term.indexOf('=');
  const name = eq === -1 ? term : term.slice(0, eq);
  const value = eq === -1 ? '' : term.slice(eq + 1).trim();
  if (!(KNOBS as readonly string[]).includes(name)) {
    throw new ProfileError(`unknown profile "${term}" (${PROFILE_HELP})`);
  }
  if (eq === -1)
    throw new ProfileError(`profile knob "${name}" needs a value, e.g. ${example(name)} (${PROFILE_HELP})`);
  switch (name as (typeof KNOBS)[number]) {
    case 'workers':
      return { ...profile, workers: whole(name, value, 1, 1000) };
    case 'idle-timeout': {
      const n = Number(value);
      if (!/^\d+(\.\d+)?$/.test(value) || n > 86_400)
        throw new ProfileError(`idle-timeout must be seconds 0-86400 (got "${value}")`);
      return { ...profile, idleTimeoutS: n };
    }
    case 'fines':
      return { ...profile, fines: oneOf(name, value, FINE_FORMATS) };
    case 'bv':
      return { ...profile, bv: onOff(name, value) };
    case 'bh':
      return { ...profile, bh: onOff(name, value) };
    case 'pad':
      return { ...profile, pad: onOff(name, value) };
    case 'sc-status-first':
      return { ...profile, scStatusFirst: onOff(name, value) };
    case 'ids':
      return { ...profile, ids: oneOf(name, value, ID_MATCHES) };
    case 'counts':
      return { ...profile, counts: oneOf(name, value, COUNT_MODES) };
    case 'unavailable-holds':
      return { ...profile, unavailableHolds: oneOf(name, value, UNAVAILABLE_HOLDS) };
    case 'bx':
      if (!BX.test(value)) {
        throw new ProfileError(`bx must be 16 letters Y or N, one per message of the 98's BX (got "${value}")`);
      }
      return { ...profile, bx: value };
    case 'transfers':
      return { ...profile, transfers: onOff(name, value) };
    case 'refused-checkin-alert':
      return { ...profile, refusedCheckinAlert: onOff(name, value) };
    case 'hold-available':
      return { ...profile, holdAvailable: oneOf(name, value, HOLD_AVAILABLE) };
  }
}

function oneOf<T extends string>(name: string, value: string, options: readonly T[]): T {
  if (!(options as readonly string[]).includes(value)) {
    throw new ProfileError(`${name} must be one of ${options.join(', ')} (got "${value}")`);
  }
  return value as T;
}

function whole(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ProfileError(`${name} must be a whole number ${min}-${max} (got "${text}")`);
  }
  return Number(text);
}

function onOff(name: string, text: string): boolean {
  if (text !== 'on' && text !== 'off') throw new ProfileError(`${name} must be on or off (got "${text}")`);
  return text === 'on';
}

function example(name: string): string {
  return (
    {
      workers: 'workers=1',
      'idle-timeout': 'idle-timeout=60',
      fines: 'fines=koha',
      ids: 'ids=folded',
      counts: 'counts=zero',
      'unavailable-holds': 'unavailable-holds=closed',
      bx: 'bx=YYYYYYYYYYYYYNYY',
      transfers: 'transfers=off',
      'hold-available': 'hold-available=waiting',
    }[name] ?? `${name}=on`
  );
}

/** The profile as terms that parseProfile reads back to the same profile ("" = no profile). */
export function describeProfile(profile: Profile): string {
  const base = defaultProfile();
  const terms: string[] = [];
  if (profile.workers !== base.workers) terms.push(`workers=${profile.workers}`);
  if (profile.idleTimeoutS !== base.idleTimeoutS) terms.push(`idle-timeout=${profile.idleTimeoutS}`);
  if (profile.fines !== base.fines) terms.push(`fines=${profile.fines}`);
  if (profile.bv !== null) terms.push(`bv=${profile.bv ? 'on' : 'off'}`);
  if (profile.bh !== null) terms.push(`bh=${profile.bh ? 'on' : 'off'}`);
  if (profile.pad) terms.push('pad=on');
  if (profile.scStatusFirst) terms.push('sc-status-first=on');
  if (profile.ids !== base.ids) terms.push(`ids=${profile.ids}`);
  if (profile.counts !== base.counts) terms.push(`counts=${profile.counts}`);
  if (profile.unavailableHolds !== base.unavailableHolds) terms.push(`unavailable-holds=${profile.unavailableHolds}`);
  if (profile.bx !== base.bx) terms.push(`bx=${profile.bx}`);
  if (profile.transfers !== base.transfers) terms.push(`transfers=${profile.transfers ? 'on' : 'off'}`);
  if (profile.refusedCheckinAlert !== base.refusedCheckinAlert)
    terms.push(`refused-checkin-alert=${profile.refusedCheckinAlert ? 'on' : 'off'}`);
  if (profile.holdAvailable !== base.holdAvailable) terms.push(`hold-available=${profile.holdAvailable}`);
  return terms.join(',');
}
