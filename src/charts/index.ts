/** SVG charts (plain strings, no DOM): the session chart behind `--chart`, and the benchmark report's charts. */
export * from './svg.js';
export * from './line-chart.js';
export * from './scatter-chart.js';
export * from './session-chart.js';
