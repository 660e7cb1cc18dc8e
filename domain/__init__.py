"""Loopline's pure domain: aggregates, their events and policies. No I/O, no clock reads."""
