/** A scrape of the service's /metrics, read as Prometheus' text format. */
export interface Scrape {
  text: string;
  /** The value of a series written exactly as the text has it (`name` or `name{label="v"}`); undefined when absent. */
  value(series: string): number | undefined;
  /** Every sample name in it (`http_request_duration_seconds_bucket`, …). */
  names: Set<string>;
}

export async function scrapeMetrics(baseUrl: string): Promise<Scrape> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  const values = new Map<string, number>();
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    const series = line.slice(0, at);
    values.set(series, Number(line.slice(at + 1)));
    names.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(series)![0]);
  }
  return { text, value: (series) => values.get(series), names };
}

/** Scrapes until `check` holds of a scrape (and answers that one), or throws after `timeoutMs`. */
export async function scrapeUntil(
  baseUrl: string,
  check: (scrape: Scrape) => boolean,
  timeoutMs = 10_000,
): Promise<Scrape> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const scrape = await scrapeMetrics(baseUrl);
    if (check(scrape)) return scrape;
    if (Date.now() > deadline)
      throw new Error(`/metrics did not show what was awaited within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
