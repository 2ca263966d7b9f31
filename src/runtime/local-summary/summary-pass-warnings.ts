import type { SummaryBand } from '../../../machines/index.js';
import { summaryWarning, type SummaryWarning } from '../../summary/repair.js';

/**
 * §14: the summaries of the current pass accepted without the full template, by band, and
 * their texts. Kept per summarizer so the report can name them, and so a summary accepted
 * after a repair request still counts as following the template.
 */
export class SummaryPassWarnings {
  private readonly warned = new Map<SummaryBand, SummaryWarning>();
  private readonly acceptedTexts = new Set<string>();
  private repairs = 0;

  /** A new pass (both bands prepared afresh) starts without warnings or repair requests. */
  clear(): void {
    this.warned.clear();
    this.repairs = 0;
  }

  /**
   * Counts repair requests sent in this pass. The machines count one call per summary, so
   * these are the provider requests they do not see; a retried band keeps its count, since
   * the requests were made.
   */
  countRepairs(n: number): void {
    this.repairs += n;
  }

  repairRequests(): number {
    return this.repairs;
  }

  /** A band re-bounded for a retry drops that band's warning. */
  forget(band: SummaryBand): void {
    this.warned.delete(band);
  }

  accept(band: SummaryBand, missingSections: string[], text: string): void {
    this.warned.set(band, summaryWarning(band, missingSections));
    this.acceptedTexts.add(text.trim());
  }

  accepted(text: string): boolean {
    return this.acceptedTexts.has(text.trim());
  }

  list(): SummaryWarning[] {
    return [...this.warned.values()];
  }
}
