"""Skill files (markdown) shipped with Loopline: _base.md and one per task type (seed 002 §36)."""
