/**
 * A small reader of the Prometheus text exposition format (what /metrics
 * sends), for tests: samples with their labels, and the declared types.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Metric family name -> declared type (# TYPE). */
  types: Map<string, string>;
  /** Metric family name -> help text (# HELP). */
  help: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      types.set(name!, type!);
      continue;
    }
    if (line.startsWith('# HELP ')) {
      const rest = line.slice(7);
      const space = rest.indexOf(' ');
      help.set(rest.slice(0, space), rest.slice(space + 1));
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let label = LABEL.exec(body); label !== null; label = LABEL.exec(body)) {
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      consumed = LABEL.lastIndex;
    }
    if (consumed !== body.length) throw new Error(`malformed labels: ${JSON.stringify(line)}`);
    const raw = match[3]!;
    const value = raw === '+Inf' ? Number.POSITIVE_INFINITY : raw === '-Inf' ? Number.NEGATIVE_INFINITY : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN' && raw !== 'Nan') throw new Error(`bad value: ${JSON.stringify(line)}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return { samples, types, help };
}

/** Samples of `name` whose labels include all of `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The sum of the matching samples; 0 when there are none (a series not yet created counts as 0). */
export function sumOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return samplesOf(exposition, name, labels).reduce((sum, sample) => sum + sample.value, 0);
}

/** The one matching sample's value; throws unless exactly one matches. */
export function single(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const found = samplesOf(exposition, name, labels);
  if (found.length !== 1)
    throw new Error(`expected one sample ${name}${JSON.stringify(labels)}, found ${found.length}`);
  return found[0]!.value;
}
