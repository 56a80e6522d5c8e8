import { machineLine, type Machine } from './machine.ts';

/** One line of the results table. Ratios are ours ÷ reference and ours ÷ limit, whichever way is better. */
export interface Figure {
  id: string;
  label: string;
  unit: string;
  better: 'higher' | 'lower';
  ours: number;
  reference: number | null;
  ratio: number | null;
  limit: number | null;
  /** What the limit is (e.g. "storage-free pipe"). */
  limitLabel: string | null;
  fractionOfLimit: number | null;
  target: string | null;
  met: boolean | null;
  /** How the figure was measured, in one line. */
  note: string;
}

export function figure(input: Omit<Figure, 'ratio' | 'fractionOfLimit'>): Figure {
  // A ratio of a figure that can be zero or negative (memory growth) means nothing: left out.
  const ratio = input.reference !== null && input.reference > 0 && input.ours >= 0 ? input.ours / input.reference : null;
  const fractionOfLimit = input.limit !== null && input.limit > 0 && input.ours >= 0 ? input.ours / input.limit : null;
  return { ...input, ratio, fractionOfLimit };
}

export function fmt(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs >= 0.01) return value.toFixed(3);
  if (abs === 0) return '0';
  return value.toPrecision(2);
}

function ratioText(value: number | null): string {
  return value === null || !Number.isFinite(value) ? '—' : `${fmt(value)}×`;
}

export function markdownTable(figures: readonly Figure[]): string {
  const lines = [
    '| Figure | Ours | Reference | Ours ÷ reference | Raw limit | Ours ÷ limit | Target | Met? |',
    '|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const f of figures) {
    const limit = f.limit === null ? '—' : `${fmt(f.limit)} (${f.limitLabel})`;
    const met = f.met === null ? '' : f.met ? '**met**' : '**not met**';
    lines.push(`| ${f.label} (${f.unit}) | ${fmt(f.ours)} | ${fmt(f.reference)} | ${ratioText(f.ratio)} | ${limit} | ${ratioText(f.fractionOfLimit)} | ${f.target ?? ''} | ${met} |`);
  }
  return lines.join('\n');
}

export interface LimitLine {
  label: string;
  value: number;
  unit: string;
}

export function markdownReport(figures: readonly Figure[], limits: readonly LimitLine[], machine: Machine, generatedAt: string, notes: readonly string[]): string {
  return [
    `Measured ${generatedAt} on ${machineLine(machine)}. Local workerd under \`wrangler dev\`; the demo harness as load.`,
    '',
    markdownTable(figures),
    '',
    'Raw limits on the same machine:',
    '',
    '| Limit | Value |',
    '|---|---:|',
    ...limits.map((l) => `| ${l.label} | ${fmt(l.value)} ${l.unit} |`),
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A horizontal bar chart, by hand: for each figure with a reference, how many
 * times better than the reference it is (higher-is-better: ours ÷ ref;
 * lower-is-better: ref ÷ ours), on a log scale centred on 1×.
 */
export function svgChart(figures: readonly Figure[], title: string): string {
  const rows = figures
    .filter((f) => f.ratio !== null && Number.isFinite(f.ratio) && f.ratio > 0)
    .map((f) => ({ label: f.label, better: f.better === 'higher' ? f.ratio! : 1 / f.ratio!, met: f.met }));
  const labelWidth = 360;
  const plotWidth = 520;
  const rowHeight = 26;
  const top = 56;
  const height = top + rows.length * rowHeight + 44;
  const width = labelWidth + plotWidth + 90;
  const logs = rows.map((r) => Math.log10(r.better));
  const minLog = Math.min(-1, Math.floor(Math.min(...logs, 0)));
  const maxLog = Math.max(1, Math.ceil(Math.max(...logs, 0)));
  const x = (log: number) => labelWidth + ((log - minLog) / (maxLog - minLog)) * plotWidth;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">${escape(title)}</text>`,
    `<text x="12" y="40" fill="#555">× better than the reference layout (log scale; right of 1× is better)</text>`,
  ];
  for (let log = minLog; log <= maxLog; log++) {
    const px = x(log);
    out.push(`<line x1="${px}" y1="${top - 6}" x2="${px}" y2="${top + rows.length * rowHeight}" stroke="${log === 0 ? '#333' : '#ddd'}"/>`);
    out.push(`<text x="${px}" y="${top + rows.length * rowHeight + 16}" text-anchor="middle" fill="#555">${10 ** log >= 1 ? 10 ** log : (10 ** log).toFixed(Math.abs(log))}×</text>`);
  }
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    const log = Math.log10(row.better);
    const x0 = x(0);
    const x1 = x(log);
    const colour = row.better >= 1 ? '#2f855a' : '#c53030';
    out.push(`<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end">${escape(row.label)}</text>`);
    out.push(`<rect x="${Math.min(x0, x1)}" y="${y + 4}" width="${Math.max(1, Math.abs(x1 - x0))}" height="${rowHeight - 10}" fill="${colour}"/>`);
    out.push(`<text x="${Math.max(x0, x1) + 6}" y="${y + 16}" fill="#222">${escape(fmt(row.better))}×${row.met === null ? '' : row.met ? ' · target met' : ' · target not met'}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
