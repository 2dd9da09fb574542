'use strict';
// Small statistics and formatting helpers for the benchmark report.

function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function fmtInt(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}

function fmtRatio(r) {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : '—';
}

/** A markdown table from a header row and data rows. */
function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

module.exports = { median, fmtInt, fmtRatio, table };
