'use strict';
// Polls /dashboard/stats.json every second and draws the figures as SVG (no library, no inline script or style:
// the demo's CSP allows only this origin's files).
(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const COLORS = { ok: '#3553c8', cached: '#8fa3ef', forbidden: '#8e5cc4', refused: '#c8413a' };
  const OUTCOME_COLORS = {
    ok: '#3553c8',
    invalid_token: '#c8413a',
    token_expired: '#d9822b',
    insufficient_scope: '#8e5cc4',
    missing_token: '#7a8194',
    insufficient_user_authentication: '#b5478f',
    invalid_dpop_proof: '#a63d2f',
    verification_unavailable: '#5f6b2e',
  };

  const el = (name, attributes, text) => {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const fmt = (n) => new Intl.NumberFormat('en').format(n);
  const micros = (us) => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${Math.round(us)} µs`);

  /** A scale step (1, 2, 5 × 10^n) that fits `max` in about four gridlines. */
  function niceMax(max) {
    if (max <= 0) return 4;
    const rough = max / 4;
    const power = 10 ** Math.floor(Math.log10(rough));
    const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough);
    return step * 4;
  }

  function grid(svg, { left, top, width, height, max, format }) {
    for (let i = 0; i <= 4; i++) {
      const y = top + height - (height * i) / 4;
      svg.append(el('line', { x1: left, x2: left + width, y1: y, y2: y, stroke: '#e6e9f2' }));
      svg.append(el('text', { x: left - 6, y: y + 4, 'text-anchor': 'end' }, format((max * i) / 4)));
    }
  }

  function drawTimeline(svg, series) {
    svg.replaceChildren();
    const left = 40,
      top = 10,
      width = 810,
      height = 180;
    const max = niceMax(Math.max(...series.map((s) => s.ok + s.forbidden + s.refused)));
    grid(svg, { left, top, width, height, max, format: (v) => fmt(Math.round(v)) });
    const slot = width / series.length;
    series.forEach((s, i) => {
      const x = left + i * slot + 1;
      let y = top + height;
      for (const [count, color] of [
        [s.ok - s.cached, COLORS.ok],
        [s.cached, COLORS.cached],
        [s.forbidden, COLORS.forbidden],
        [s.refused, COLORS.refused],
      ]) {
        if (count <= 0) continue;
        const h = (height * count) / max;
        y -= h;
        svg.append(el('rect', { x, y, width: Math.max(slot - 2, 1), height: h, fill: color }));
      }
    });
    svg.append(el('text', { x: left, y: top + height + 18 }, '60 s ago'));
    svg.append(el('text', { x: left + width, y: top + height + 18, 'text-anchor': 'end' }, 'now'));
  }

  function drawBars(svg, bars, format) {
    svg.replaceChildren();
    const left = 130,
      top = 5,
      width = 240,
      rowHeight = 120 / Math.max(bars.length, 3);
    const max = Math.max(1, ...bars.map((b) => b.value));
    bars.forEach((b, i) => {
      const y = top + i * rowHeight;
      const w = (width * b.value) / max;
      svg.append(el('text', { x: left - 8, y: y + rowHeight / 2 + 4, 'text-anchor': 'end' }, b.label));
      svg.append(el('rect', { x: left, y: y + 4, width: Math.max(w, 1), height: rowHeight - 8, fill: b.color, rx: 3 }));
      svg.append(el('text', { x: left + w + 6, y: y + rowHeight / 2 + 4, class: 'value' }, format(b.value)));
    });
  }

  function render(stats) {
    const ok = stats.outcomes.ok ?? 0;
    document.getElementById('total').textContent = fmt(stats.total);
    document.getElementById('ok').textContent = fmt(ok);
    document.getElementById('refused').textContent = fmt(stats.total - ok);
    document.getElementById('hit-rate').textContent = `${Math.round(stats.cacheHitRate * 100)} %`;
    document.getElementById('p50').textContent = stats.samples === 0 ? '–' : micros(stats.percentiles.p50);
    drawTimeline(document.getElementById('timeline'), stats.series);
    const outcomes = Object.entries(stats.outcomes)
      .sort((a, b) => b[1] - a[1])
      .map(([label, value]) => ({ label, value, color: OUTCOME_COLORS[label] ?? '#7a8194' }));
    drawBars(document.getElementById('outcomes'), outcomes, fmt);
    const { p50, p90, p99 } = stats.percentiles;
    drawBars(
      document.getElementById('percentiles'),
      [
        { label: 'p50', value: p50, color: '#3553c8' },
        { label: 'p90', value: p90, color: '#6f86e0' },
        { label: 'p99', value: p99, color: '#a9b7f2' },
      ],
      micros,
    );
    document.body.dataset.total = String(stats.total);
  }

  async function poll() {
    try {
      const res = await fetch('/dashboard/stats.json', { headers: { Accept: 'application/json' } });
      if (res.ok) render(await res.json());
    } catch {
      // The demo stopped or restarted: keep the last picture and try again.
    }
    setTimeout(poll, 1000);
  }
  poll();
})();
