/** How the benchmarks print their figures: markdown, with each target marked met or not. */
export const fmt = (n: number, digits = 0) => n.toFixed(digits);
export const mark = (ok: boolean) => (ok ? 'yes' : '**no**');
