"""The HTTP edge: `loopline serve`'s dashboard, ingestion API and operations endpoints (an ASGI app on FastAPI)."""
