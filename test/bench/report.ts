/** How the benchmarks print their figures: markdown, with each target marked met or not. */
export const fmt = (n: number, digits = 0) => n.toFixed(digits);
export const mark = (ok: boolean) => (ok ? 'yes' : '**no**');
/** The nearest-rank quantile (q = 0.99 for p99) of the values. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}
