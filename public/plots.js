// Time plots (uPlot) of the streamed frames: a rolling window of the last MAX_POINTS
// frames; drawing is batched (at most every REDRAW_MS) so a fast stream does not redraw
// on every frame.
import uPlot from "uplot";

const MAX_POINTS = 3000;
const REDRAW_MS = 100;
const COLORS = ["#4ea1ff", "#f5a623", "#7ed321", "#ff6f61", "#bd10e0", "#50e3c2"];

export class TimePlot {
  /**
   * @param {HTMLElement} container
   * @param {string[]} labels series names (after time)
   */
  constructor(container, labels) {
    this.container = container;
    this.labels = labels;
    this.data = [[], ...labels.map(() => [])];
    this.dirty = false;
    this.last = 0;
    this.plot = null;
    this.build();
    new ResizeObserver(() => this.resize()).observe(container);
  }

  build() {
    if (this.plot) this.plot.destroy();
    const axis = {
      stroke: "#8a939e",
      grid: { stroke: "#2f353d", width: 1 },
      ticks: { stroke: "#2f353d", width: 1 },
    };
    this.plot = new uPlot(
      {
        width: Math.max(200, this.container.clientWidth),
        height: 190,
        scales: { x: { time: false } },
        axes: [
          { ...axis, label: "t (s)" },
          { ...axis, size: 60 },
        ],
        legend: { live: true },
        series: [
          { label: "t", value: (_u, v) => (v == null ? "–" : v.toFixed(3)) },
          ...this.labels.map((label, i) => ({
            label,
            stroke: COLORS[i % COLORS.length],
            width: 1.5,
            value: (_u, v) => (v == null ? "–" : Number(v).toPrecision(5)),
          })),
        ],
      },
      this.data,
      this.container,
    );
  }

  /** Replaces the series (and clears the data). */
  setLabels(labels) {
    this.labels = labels;
    this.data = [[], ...labels.map(() => [])];
    this.build();
  }

  resize() {
    if (this.plot)
      this.plot.setSize({ width: Math.max(200, this.container.clientWidth), height: 190 });
  }

  /**
   * Appends one point (t, values in series order); a time going backwards clears the plot,
   * and a point at the last point's time replaces it (a live frame of a step the history
   * already plotted, when the two overlap on attach).
   */
  push(t, values) {
    const x = this.data[0];
    if (x.length && t < x[x.length - 1]) this.clear();
    if (x.length && t === x[x.length - 1]) {
      for (let i = 0; i < values.length; i++) this.data[i + 1][x.length - 1] = values[i];
      this.dirty = true;
      this.maybeRedraw();
      return;
    }
    x.push(t);
    for (let i = 0; i < values.length; i++) this.data[i + 1].push(values[i]);
    if (x.length > MAX_POINTS) {
      const cut = Math.ceil(MAX_POINTS / 10);
      for (const a of this.data) a.splice(0, cut);
    }
    this.dirty = true;
    this.maybeRedraw();
  }

  clear() {
    for (const a of this.data) a.length = 0;
    this.dirty = true;
    this.maybeRedraw(true);
  }

  get length() {
    return this.data[0].length;
  }

  maybeRedraw(force = false) {
    const now = performance.now();
    if (!force && now - this.last < REDRAW_MS) {
      if (!this.pending) {
        this.pending = setTimeout(() => {
          this.pending = null;
          this.maybeRedraw(true);
        }, REDRAW_MS);
      }
      return;
    }
    if (!this.dirty) return;
    this.dirty = false;
    this.last = now;
    this.plot.setData(this.data);
  }

  /** The plot's canvas (tests read its pixels). */
  get canvas() {
    return this.container.querySelector("canvas");
  }
}
