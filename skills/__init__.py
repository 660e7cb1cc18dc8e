"""Skill files (markdown) shipped with Loopline: _base.md and one per task type, each telling the model how that type is worked."""
