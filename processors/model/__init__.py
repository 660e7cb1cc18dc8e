"""The model's side of a decision: what it is told (prompts) and the tools it answers with."""
