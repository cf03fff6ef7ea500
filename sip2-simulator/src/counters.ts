/**
 * Per message code: `received` counts every decoded request, `executed` the
 * operations actually performed. 97 replays, retransmissions, requests refused
 * before login and requests refused by the rejectMessage fault are received
 * but not executed; tests use `executed` to prove nothing ran twice.
 */
export class Counters {
  private received = new Map<string, number>();
  private executed = new Map<string, number>();

  countReceived(code: string): void {
    this.received.set(code, (this.received.get(code) ?? 0) + 1);
  }

  countExecuted(code: string): void {
    this.executed.set(code, (this.executed.get(code) ?? 0) + 1);
  }

  reset(): void {
    this.received.clear();
    this.executed.clear();
  }

  snapshot(): { received: Record<string, number>; executed: Record<string, number> } {
    return { received: sorted(this.received), executed: sorted(this.executed) };
  }
}

function sorted(map: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...map.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
