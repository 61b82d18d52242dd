"""LLM-driven steps through the `anthropic` SDK: actor, AI checks, LLM state updater, cassettes.

Nothing here is imported by `pytest_guistate.core`; the plugin wires it in via `options` and
`facade`. Import the submodules you need (`pytest_guistate.llm.actor`, `.check`, `.cassette`,
`.reference_server`, ...): this package stays empty so loading the plugin does not import the SDK.
"""
