"""Read models: one module per model, holding its tables, its projector and its queries."""
