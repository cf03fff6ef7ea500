function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** "; did you mean X?" for the closest known name, if any is close. */
export function suggest(name: string, known: readonly string[]): string {
  const normal = (text: string) => text.toLowerCase().replace(/[-_]/g, '');
  const same = known.find((candidate) => normal(candidate) === normal(name));
  if (same) return `; did you mean ${same}?`;
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(name.length / 5));
  for (const candidate of known) {
    const distance = levenshtein(normal(name), normal(candidate));
    if (distance <= bestDistance) {
      best = candidate;
      bestDistance = distance - 1;
    }
  }
  return best ? `; did you mean ${best}?` : '';
}
