"""The action cache: LLM steps recorded once as actions (`cachefile`, `record`), replayed with 0 tokens
and each hit verified (`replay`), healed through the cross-run memory (`memory_heal`), one cache per
test (`per_test`) and the `guistate cache` command (`cli`)."""
