-- What a completed run's RUN_FINISHED reported it used (SPEC "Harness chunks:
-- one dialect"): AG-UI token counts as JSON, `{inputTokens, outputTokens,
-- cachedInputTokens?, cacheWriteInputTokens?}`; NULL when none was reported.
ALTER TABLE run ADD COLUMN usage TEXT;
