"""core: the trace records and their JSON contract, structural checks, knobs, sampling math (docs/architecture.md).
Imports nothing from the other rooms; reading a trace (core.trace) loads neither torch nor the engine."""
