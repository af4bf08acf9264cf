/** One match as grep_search reports it; its readers (grep-events.ts, grep-long-event.ts) both build it. */
export interface Match {
  path: string;
  /** 1-based line. */
  line: number;
  /** 1-based column of the match, in characters. */
  column: number;
  /** The line, cut around the match when long. */
  text: string;
}
