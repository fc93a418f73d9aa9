"""The engine: plan a stack's changes and carry them out along the dependency graph."""
