"""The reference model: a deterministic stand-in for the Anthropic Messages API on loopback (`server`),
its decisions (`policy`, `goals`), the API's request limits (`api_limits`), token counting (`tokens`)
and re-recording cassettes against it (`rerecord`)."""
