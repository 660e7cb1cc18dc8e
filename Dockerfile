# The Loopline worker image for the scale deployment (compose.yml): `loopline run` by default.
# Configuration is environment only (LOOPLINE_EVENT_STORE, LOOPLINE_READ_MODEL, LOOPLINE_KAFKA, ...).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

COPY pyproject.toml README.md ./
COPY domain/ domain/
COPY processors/ processors/
COPY adapters/ adapters/
COPY projections/ projections/
COPY runtime/ runtime/
COPY cli/ cli/
COPY skills/ skills/

RUN pip install '.[scale]'

# A non-root user owning LOOPLINE_HOME. A fresh named volume mounted on /data takes this
# ownership, so every replica sharing it can write the outbox.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/loopline loopline \
    && mkdir -p /data \
    && chown loopline:loopline /data

ENV LOOPLINE_HOME=/data
USER loopline

ENTRYPOINT ["loopline"]
CMD ["run"]
