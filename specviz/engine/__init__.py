"""engine: rules, verification, drafters, the method registry and catalogue, the one decode loop (imports core)."""
