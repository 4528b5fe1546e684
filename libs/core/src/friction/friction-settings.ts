/** The friction report's thresholds and cost model (every field required: no silent defaults). */
export interface FrictionSettings {
  /** Refuse to report below this many sessions in the window and scope. */
  minSessions: number;
  /** Refuse to report below this many events in the window and scope. */
  minEvents: number;
  /** A failure pattern, correction or retry habit counts once it is seen in this many sessions. */
  minSessionsPerFinding: number;
  /** The same command failing this many times in one session is a retry loop (tool misuse). */
  minRetries: number;
  /** Two corrections are the same when their keyword sets are at least this similar (Jaccard). */
  correctionSimilarity: number;
  /** Evidence ids kept per finding (the counts stay exact). */
  maxEvidence: number;
  /** Minutes a person or an agent loses per occurrence beyond the tool's own duration. */
  minutesPerOccurrence: number;
  /** Tokens that cost as much as a minute (turns token counts into the severity's minutes). */
  tokensPerMinute: number;
  /**
   * Configuration drift: the same repair (a config file edited, a setup command rerun) after the
   * same error counts once it is seen in this many sessions (seed 001: "worker restarted 3
   * times, same root cause").
   */
  minDriftSessions: number;
  /** Missing skills: a recipe counts once it is done by hand in this many sessions. */
  minRecipeSessions: number;
  /** Missing skills: the fewest and most consecutive tool calls of a recipe. */
  minRecipeSteps: number;
  maxRecipeSteps: number;
  /** Missing skills: a recipe runs at least this many commands (reads alone are no recipe). */
  minRecipeCommands: number;
}

export const DEFAULT_FRICTION_SETTINGS: Readonly<FrictionSettings> = {
  minSessions: 5,
  minEvents: 100,
  minSessionsPerFinding: 2,
  minRetries: 3,
  correctionSimilarity: 0.4,
  maxEvidence: 10,
  minutesPerOccurrence: 2,
  tokensPerMinute: 1_000,
  minDriftSessions: 3,
  minRecipeSessions: 5,
  minRecipeSteps: 3,
  maxRecipeSteps: 5,
  minRecipeCommands: 2,
};
