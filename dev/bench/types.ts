/** One table of benchmark results. */
export interface BenchSection {
  title: string;
  headers: string[];
  rows: Array<Array<string | number>>;
  /** Lines printed under the table (what was measured, baselines, caveats). */
  notes?: string[];
  /** Charts the report writes next to report.md and links under the table. */
  charts?: BenchChart[];
}

/** A generated chart: an SVG document and the file name it is written to. */
export interface BenchChart {
  /** File name inside the report directory, e.g. `recall-vs-tokens.svg`. */
  file: string;
  title: string;
  svg: string;
}

/** Options every suite receives. */
export interface BenchContext {
  /** Fewer repetitions and smaller sizes (used by smoke tests). */
  quick: boolean;
  /** Shared session corpus directory, or null when unavailable. */
  corpusDir: string | null;
  /** Retention windows to sweep (default: the suite's own list). */
  windows?: number[];
  /** Synthetic long sessions to add to the corpus (default: the suite's own count). */
  synthetic?: number;
  log(line: string): void;
}

/** A named group of benchmarks. */
export interface BenchSuite {
  name: string;
  run(ctx: BenchContext): Promise<BenchSection[]>;
}
