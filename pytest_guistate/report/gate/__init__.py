"""The CI merge gate over run summaries: the verdict and its exit codes (`verdict`), the command
(`cli`), its output formats (`formats`), the action cache's criteria (`cache`), CI shards (`shards`,
and `summary_merge`, the `guistate summary merge` command) and regressions against a baseline run
(`baseline`)."""
