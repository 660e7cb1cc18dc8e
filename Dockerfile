# The Loopline image for the scale deployment (compose.yml): `loopline run` by default, `loopline serve` for the web.
# Configuration is environment only (LOOPLINE_EVENT_STORE, LOOPLINE_READ_MODEL, LOOPLINE_KAFKA, ...).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The dependencies first, exactly as locked (`make lock`): two builds a month apart install the same
# files, and this layer is reused while requirements.lock is unchanged.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock

COPY pyproject.toml README.md ./
COPY domain/ domain/
COPY processors/ processors/
COPY adapters/ adapters/
COPY projections/ projections/
COPY runtime/ runtime/
COPY cli/ cli/
COPY skills/ skills/
COPY web/ web/

# Loopline itself, built with the locked setuptools: nothing here resolves or downloads a dependency.
RUN pip install --no-cache-dir --no-deps --no-build-isolation .

# A non-root user owning LOOPLINE_HOME. A fresh named volume mounted on /data takes this
# ownership, so every replica sharing it can write the outbox.
RUN groupadd --system --gid 10001 loopline \
    && useradd --system --uid 10001 --gid loopline --create-home --home-dir /home/loopline loopline \
    && mkdir -p /data \
    && chown loopline:loopline /data

ENV LOOPLINE_HOME=/data
# Numeric, so a runtime that checks for a non-root user (runAsNonRoot) can tell without reading /etc/passwd.
USER 10001:10001

ENTRYPOINT ["loopline"]
CMD ["run"]
