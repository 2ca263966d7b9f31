/** What clearing did to one tool's results (CLI per-tool table). */
export interface ToolClearingStats {
  tool: string;
  cleared: number;
  kept: number;
  /** Estimated tokens of the original results that were replaced by stubs. */
  clearedTokens: number;
  /** Estimated tokens of results left as they were. */
  keptTokens: number;
}

/**
 * Per-request diagnostics of the projection. The protection and evidence counts are 0
 * when clearing did not run (below trigger, disabled, or native edits).
 */
export interface ProjectionDiagnostics {
  /** Estimated tokens of the history as given (before normalization and clearing). */
  originalTokens: number;
  /** Estimated tokens of the projected messages. */
  projectedTokens: number;
  /** Results replaced by a stub. */
  clearedResults: number;
  /** Batches protected by the evidence window or the count rule. */
  protectedBatches: number;
  /** Tool results protected (batch members and count-protected unmatched results). */
  protectedResults: number;
  /** Calls whose arguments or freeform input became the placeholder. */
  clearedInputs: number;
  /** Effective clearing trigger. */
  localTrigger: number;
  /** Evidence window budget. */
  evidenceBudget: number;
  /** True when the trigger was reached and the clearing pass ran. */
  clearingApplied: boolean;
  /** One line: why clearing ran or not, and what protected what. */
  reason: string;
  /** Batches inside the evidence window. */
  evidenceBatches: number;
  /** Tokens of those batches (assistant inputs + results). */
  evidenceTokens: number;
  /** Per tool name, sorted by name. */
  perTool: ToolClearingStats[];
}
